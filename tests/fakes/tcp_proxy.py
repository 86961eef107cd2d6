"""A loopback TCP proxy that can cut its connections and refuse new ones (`down()`) and
listen again on the same port (`up()`): a database outage without stopping the server."""
from __future__ import annotations

import socket
import threading
from types import TracebackType
from typing import Optional


class TcpProxy:
    """127.0.0.1:`port` -> `target_host`:`target_port`, one thread pair per connection."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._listener: Optional[socket.socket] = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def up(self) -> None:
        """Accept connections (again) on the same port."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Refuse new connections and cut every open one (the server 'went away')."""
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)  # shutdown wakes the thread blocked in accept()
        with self._lock:
            for sock in list(self._open):
                _close(sock)
            self._open.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=5)
                server.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(sink)

    def __enter__(self) -> "TcpProxy":
        self.up()
        return self

    def __exit__(self, kind: Optional[type], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.down()


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
