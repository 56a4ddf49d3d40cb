"""Scripts that run inside sandbox containers.

They are shipped into the container as text (never imported by the host process) and run on the
container's own interpreter, so they use the standard library only and stay valid Python 3.9.
"""

from importlib.resources import files


def script_text(name: str) -> bytes:
    """The source of the in-container script ``name`` (e.g. ``"runner.py"``)."""
    return files(__name__).joinpath(name).read_bytes()
