"""The sandbox holds: each test attacks it from inside a sandboxed test run, exactly as a drafted
reproduction test would run, and checks it held (the shared checks are in
``tests/support/sandbox_attack.py``)."""
