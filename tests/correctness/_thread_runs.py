"""One function on many threads at once; the first exception any of them raised is raised in the caller."""

import threading


def run_in_threads(work, arguments):
    """``work(argument)`` on one thread per argument, all started before any is joined."""
    errors = []

    def guarded(argument):
        try:
            work(argument)
        except BaseException as exc:  # surfaced in the calling thread below
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(argument,)) for argument in arguments]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
