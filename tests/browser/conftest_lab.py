"""Helpers shared by the live tests (a module, not a conftest, so it can be imported by name)."""
import socket


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
