"""How fast an API model's requests go: at most `rpm` requests and `tpm` tokens in any 60 seconds, and at most
`limit` at once, a limit that halves on each 429 (rate limited) and grows back by one after `limit` requests in a
row went through (additive increase, multiplicative decrease, as TCP does), never above the concurrency asked.
"""
from __future__ import annotations

import collections
import threading
import time

WINDOW_S = 60.0


class Pacer:
    def __init__(self, concurrency: int, rpm: int | None = None, tpm: int | None = None, clock=time.monotonic,
                 sleep=time.sleep):
        self.ceiling = self.limit = max(1, concurrency)
        self.rpm, self.tpm = rpm, tpm
        self.clock, self.sleep = clock, sleep
        self._cond = threading.Condition()
        self._active = 0
        self._ok_in_a_row = 0
        self._sent: collections.deque = collections.deque()  # (time, [tokens]) of the requests of the window
        self.waited_s = 0.0  # time spent waiting for the per-minute limits (for tests and logs)
        self.lowered = 0  # times a 429 lowered the limit

    def _wait_for_window(self, tokens: int) -> float:
        """Seconds to wait before a request of `tokens` fits the per-minute limits (0: now). Under the lock."""
        now = self.clock()
        while self._sent and now - self._sent[0][0] >= WINDOW_S:
            self._sent.popleft()
        waits = [0.0]
        if self.rpm is not None and len(self._sent) >= self.rpm:
            waits.append(self._sent[len(self._sent) - self.rpm][0] + WINDOW_S - now)
        if self.tpm is not None and self._sent:
            used = sum(t[0] for _, t in self._sent)
            if used + tokens > self.tpm:
                # the oldest requests must leave the window until the new one fits (alone, it always may)
                for at, t in self._sent:
                    used -= t[0]
                    if used + tokens <= self.tpm:
                        waits.append(at + WINDOW_S - now)
                        break
        return max(waits)

    def acquire(self, tokens: int = 0) -> list:
        """Wait for a slot and for the per-minute limits; returns the request's token counter (`settle` it)."""
        with self._cond:
            while self._active >= self.limit:
                self._cond.wait()
            self._active += 1
        while True:
            with self._cond:
                wait = self._wait_for_window(tokens)
                if wait <= 0:
                    counter = [tokens]
                    self._sent.append((self.clock(), counter))
                    return counter
            self.waited_s += wait
            self.sleep(min(wait, WINDOW_S))

    def settle(self, counter: list, tokens: int | None) -> None:
        """The request's real tokens, once known (the window counts them instead of the estimate)."""
        if tokens is not None:
            with self._cond:
                counter[0] = tokens

    def release(self, rate_limited: bool = False) -> None:
        with self._cond:
            self._active -= 1
            if rate_limited:
                if self.limit > 1:
                    self.lowered += 1
                self.limit = max(1, self.limit // 2)
                self._ok_in_a_row = 0
            else:
                self._ok_in_a_row += 1
                if self._ok_in_a_row >= self.limit and self.limit < self.ceiling:
                    self.limit += 1
                    self._ok_in_a_row = 0
            self._cond.notify_all()


GIVE_UP = 20  # requests failed in a row, with no answer between them, after which an API run stops
TIMEOUT_TRIES = 2  # tries of a request that timed out (a text that never answers costs 2 timeouts, not 6)


class FailureStreak:
    """Requests of a model failed in a row, every thread together (timeouts, lost connections, 5xx, malformed
    answers; not 429, which the pacer slows down for): any answer ends the streak. A server that fails everything
    stops the run after `limit` such requests instead of every text's retries, batch after batch."""

    def __init__(self, limit: int = GIVE_UP):
        self.limit = limit
        self._lock = threading.Lock()
        self.count = 0

    def answered(self) -> None:
        with self._lock:
            self.count = 0

    def failed(self) -> bool:
        """Count a failed request; True when the streak has reached the limit (give up)."""
        with self._lock:
            self.count += 1
            return self.count >= self.limit
