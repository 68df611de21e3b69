"""The advisory lock that one writer of a local store (directory or zip archive) holds.

A dataset opened for writing holds an exclusive ``flock`` on a lock file *beside* the store:
``.<name>.nczarr-lock`` in the folder that holds the store's real path (symbolic links
resolved, so two spellings of one store share one lock). Beside rather than inside: the
lock is then never a key of the store, survives ``mode='w'`` replacing the store, and works
for a zip archive, which is replaced as a whole when it is written.

The holder removes the file when it lets go (a file left by a killed process is reused:
the kernel released its lock). A waiter that got the lock of a file removed meanwhile
notices (the path no longer names the file it locked) and tries again, so two writers can
never hold the locks of two different files. Readers take no lock and never wait.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import math
import os
import time
from collections.abc import Callable

from nczarr.errors import StoreError, StoreLockedError

try:
    import fcntl
except ImportError:  # Windows: no flock; writers are not serialised there
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

#: How long a writer waits for another to finish, in seconds, unless told otherwise.
DEFAULT_LOCK_TIMEOUT = 10.0
#: The environment variable that sets the default wait (seconds; ``inf`` waits for ever).
LOCK_TIMEOUT_ENV = "NCZARR_LOCK_TIMEOUT"
#: What closes the datasets the garbage collector found dropped unclosed (the API registers
#: it): a waiting writer collects, then runs these, so that such a holder lets go.
AFTER_COLLECT: list[Callable[[], None]] = []
LOCK_SUFFIX = ".nczarr-lock"
#: How often a waiting writer tries again.
_POLL = 0.05


def lock_path(location: str | os.PathLike[str]) -> str:
    """The lock file of the store at the local path ``location`` (which need not exist)."""
    real = os.path.realpath(os.path.abspath(os.fspath(location)))
    head, name = os.path.split(real.rstrip(os.sep) or real)
    return os.path.join(head, f".{name}{LOCK_SUFFIX}")


def lock_timeout(timeout: float | None = None) -> float:
    """``timeout``, else the environment's ``NCZARR_LOCK_TIMEOUT``, else the default."""
    if timeout is None:
        text = os.environ.get(LOCK_TIMEOUT_ENV)
        if not text:
            return DEFAULT_LOCK_TIMEOUT
        try:
            timeout = float(text)
        except ValueError:
            raise StoreError(f"{LOCK_TIMEOUT_ENV}={text!r} is not a number of seconds") from None
    if math.isnan(timeout) or timeout < 0:
        raise StoreError(f"a lock timeout must be a number of seconds >= 0, not {timeout!r}")
    return timeout


class WriterLock:
    """The exclusive lock of one store's writer, held from :meth:`acquire` to :meth:`release`."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        self.location = os.fspath(location)
        self.path = lock_path(location)
        self._fd: int | None = None

    def __repr__(self) -> str:
        return f"WriterLock({self.path!r}, held={self.held})"

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float | None = None) -> WriterLock:
        """Take the lock, waiting up to ``timeout`` seconds (see :func:`lock_timeout`) for
        another writer to let go; StoreLockedError naming the store if it does not."""
        if self._fd is not None:
            raise StoreError(f"{self!r} is already held")
        if fcntl is None:
            log.warning("no file locking on this platform: %r is not protected from other writers", self.location)
            return self
        wait = lock_timeout(timeout)
        deadline = time.monotonic() + wait
        collected = False
        while True:
            fd = self._try_once()
            if fd is not None:
                self._fd = fd
                return self
            if not collected:
                # the holder may be a dataset of this process dropped without close(),
                # which lets go when it is collected
                collected = True
                gc.collect()
                for hook in AFTER_COLLECT:
                    hook()
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StoreLockedError(
                    f"{self.location!r} is open for writing by another writer{self._holder()} "
                    f"(lock {self.path!r}, waited {wait:g} s); close it first, or wait longer "
                    f"with lock_timeout= or {LOCK_TIMEOUT_ENV}"
                )
            time.sleep(min(_POLL, remaining))

    def _try_once(self) -> int | None:
        """A descriptor of the lock file, locked, or None when another writer holds it."""
        while True:
            try:
                try:
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
                except FileNotFoundError:  # a new store in a new folder: the store makes it too
                    os.makedirs(os.path.dirname(self.path), exist_ok=True)
                    continue
            except OSError as exc:
                raise StoreError(f"cannot create the lock file {self.path!r} of {self.location!r}: {exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            except OSError as exc:
                os.close(fd)
                raise StoreError(f"cannot lock {self.path!r} for {self.location!r}: {exc}") from exc
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                current = None
            mine = os.fstat(fd)
            if current is not None and (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
                break
            os.close(fd)  # the holder removed the file as we locked it: lock the new one
        try:  # who holds it, for the error a waiting writer gives (only informative)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        return fd

    def _holder(self) -> str:
        try:
            with open(self.path, encoding="ascii") as file:
                pid = file.read().strip()
        except (OSError, ValueError):
            return ""
        return f" (process {pid})" if pid.isdigit() else ""

    def release(self) -> None:
        """Let go of the lock (nothing when it is not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.remove(self.path)  # while still holding it: see the module's docstring
        os.close(fd)

    def __enter__(self) -> WriterLock:
        return self if self.held else self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def writer_lock(location: str | os.PathLike[str] | None, timeout: float | None = None) -> WriterLock | None:
    """The lock of the local store at ``location``, acquired; None when ``location`` is None
    (a store that is not a local file or folder: object stores check metadata instead) or
    when the folder that holds the store is not writable (a warning says so: the caller
    then checks metadata as for an object store)."""
    if location is None:
        return None
    lock = WriterLock(location)
    folder = os.path.dirname(lock.path)
    if os.path.isdir(folder) and not os.access(folder, os.W_OK):
        log.warning(
            "cannot create the lock file %r (the folder is not writable): other writers of %r "
            "are not kept out, metadata writes are checked instead",
            lock.path, os.fspath(location),
        )
        return None
    return lock.acquire(timeout)
