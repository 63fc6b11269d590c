"""Start work on a thread without waiting for that thread to run (issue 24, speed14).

`threading.Thread.start()` returns only once the new thread has run far enough to say it started: the caller
waits for the OS to schedule it and, with the GIL, for it to hand the GIL back (up to a switch interval, 5 ms).
On a loaded machine that was 2-12 ms per thread on `chat -q`'s path to its first request (the session store's
opening, the sandbox warm-up, the path policy). `start()` returns at once; the returned Event is set when the
work is done, however it ended (what it raised is the work's own business: catch it inside). The thread is a
daemon in effect: the interpreter does not wait for it at exit; wait on the Event where its result matters."""

from __future__ import annotations

import threading
from collections.abc import Callable


def start(work: Callable[[], object]) -> threading.Event:
    """Run `work()` on a new thread; the Event is set when it has returned or raised."""
    import _thread

    done = threading.Event()

    def run() -> None:
        import time

        time.sleep(0)  # the GIL straight back to the caller, which is usually about to send a request
        try:
            work()
        finally:
            done.set()

    _thread.start_new_thread(run, ())
    return done
