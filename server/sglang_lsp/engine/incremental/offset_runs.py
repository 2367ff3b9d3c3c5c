"""A script's byte map kept as runs: for each byte of a shell script held in a YAML block scalar,
where it starts (or ends) in the file, stored as the runs of consecutive offsets it is made of.

The map of a 2,000-line script has some 60,000 entries but only about one run per line (a line's
bytes follow each other in the file; its indentation, a ``$(VAR)`` the kubelet filled in or a
``$$`` breaks the run). An edit that changes the script's length moves every entry after it:
done entry by entry that was about 5 ms of Python per keystroke
(:mod:`sglang_lsp.engine.incremental.yaml_block`); done run by run it is a few hundred additions.
:class:`OffsetRuns` reads like the list it stands for (``len``, an index, a slice, ``index``) and
makes the edited map without the list.
"""

from __future__ import annotations

import bisect
import operator
from typing import Sequence


class OffsetRuns:
    """A list of ints as runs of consecutive values: run ``k`` starts at index ``idx[k]`` with the
    value ``val[k]``, and each next index holds the next value, up to the next run (or ``n``)."""

    __slots__ = ("idx", "val", "n")

    def __init__(self, idx: list[int], val: list[int], n: int):
        self.idx, self.val, self.n = idx, val, n

    @classmethod
    def of(cls, values: Sequence[int]) -> "OffsetRuns":
        values = list(values)
        if not values:
            return cls([], [], 0)
        # where a value is not the one before plus one: compared in C, one byte per pair
        steps = bytes(map((1).__eq__, map(operator.sub, values[1:], values)))
        idx = [0]
        at = steps.find(0)
        while at != -1:
            idx.append(at + 1)
            at = steps.find(0, at + 1)
        return cls(idx, [values[i] for i in idx], len(values))

    def __len__(self) -> int:
        return self.n

    def _end(self, k: int) -> int:
        return self.idx[k + 1] if k + 1 < len(self.idx) else self.n

    def __getitem__(self, key: int | slice) -> int | list[int]:
        if isinstance(key, slice):
            a, b, step = key.indices(self.n)
            if step != 1:
                raise ValueError("OffsetRuns takes slices of step 1")
            out: list[int] = []
            if a >= b:
                return out
            idx, val = self.idx, self.val
            k = bisect.bisect_right(idx, a) - 1
            i = a
            while i < b:
                stop = min(self._end(k), b)
                v = val[k] + i - idx[k]
                out.extend(range(v, v + stop - i))
                i = stop
                k += 1
            return out
        i = operator.index(key)
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("OffsetRuns index out of range")
        k = bisect.bisect_right(self.idx, i) - 1
        return self.val[k] + i - self.idx[k]

    def __iter__(self):
        return iter(self[0:self.n])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, OffsetRuns):
            other = other[0:other.n]
        return isinstance(other, list) and self[0:self.n] == other

    __hash__ = None  # type: ignore[assignment]

    def index(self, value: int, lo: int = 0, hi: int | None = None) -> int:
        """The first index in ``[lo, hi)`` holding ``value`` (``ValueError``: none)."""
        hi = self.n if hi is None else min(hi, self.n)
        idx, val = self.idx, self.val
        for k in range(max(0, bisect.bisect_right(idx, lo) - 1), len(idx)):
            if idx[k] >= hi:
                break
            i = idx[k] + value - val[k]
            if val[k] <= value and i < self._end(k) and lo <= i < hi:
                return i
        raise ValueError(f"{value} is not in the map")

    def min(self) -> int:
        return min(self.val)

    def moved(self, delta: int) -> "OffsetRuns":
        """Every value plus ``delta``."""
        return OffsetRuns(self.idx, [v + delta for v in self.val], self.n)

    def edited(self, sp: int, se: int, first: int, count: int, threshold: int, delta: int) -> "OffsetRuns":
        """This list with the entries ``[sp, se)`` replaced by ``first, first + 1, …`` (``count`` of
        them) and each entry after them that is at least ``threshold`` plus ``delta`` (the map after
        an edit of the file: the offsets after it move, those before it stay)."""
        idx, val, n = self.idx, self.val, self.n
        keep = bisect.bisect_left(idx, sp)  # the runs starting before the edit (the last one cut there)
        new_idx, new_val = idx[:keep], val[:keep]
        if count:
            new_idx.append(sp)
            new_val.append(first)
        if se < n:
            shift = sp + count - se
            k = bisect.bisect_right(idx, se) - 1
            # the run holding `se`, from `se` on, then the later runs as they are
            starts = [se + shift, *(i + shift for i in idx[k + 1:])]
            values = [val[k] + se - idx[k], *val[k + 1:]]
            if min(values) >= threshold:
                new_idx += starts
                new_val += [v + delta for v in values]
            else:
                ends = [*idx[k + 1:], n]
                for j, (i0, v0) in enumerate(zip(starts, values)):
                    last = v0 + (ends[j] + shift - i0) - 1
                    if v0 >= threshold:
                        new_idx.append(i0)
                        new_val.append(v0 + delta)
                    elif last < threshold:
                        new_idx.append(i0)
                        new_val.append(v0)
                    else:  # a run across the threshold: the part from it on moves
                        new_idx += [i0, i0 + threshold - v0]
                        new_val += [v0, threshold + delta]
        return OffsetRuns(new_idx, new_val, n - (se - sp) + count)
