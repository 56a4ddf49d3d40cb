"""Reading an issue once: code blocks, sessions, tracebacks, stated expectations and names."""
