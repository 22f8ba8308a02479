"""The one-line message of a runtime violation (``strict`` watches raise with it)."""

from __future__ import annotations

from pinlint.runtime.model import DeviceToHostCopy, Violation


def strict_message(v: Violation) -> str:
    """One line that starts with the copy's call site and says where the fix belongs."""
    t = v.transfer
    if isinstance(t, DeviceToHostCopy):
        return (
            f"{v.location}: host read of the destination of {t.via or t.api}(non_blocking=True) at "
            f"{v.copy_site} before it was synchronised [{v.code}]: synchronise the copy's stream first"
        )
    head = f"{v.copy_site}: {t.via or t.api}(non_blocking=True) to {t.device}"
    if v.kind == "pinned-but-staged":
        return f"{head} from a pinned but non-contiguous source [{v.code}]: it stages through a pageable temporary; copy from a contiguous pinned buffer"
    birth = t.birth
    if birth is None:
        return f"{head} from pageable host memory [{v.code}]: the source was not created by a known factory inside the watch"
    if birth.pinnable and birth.pin_memory_false:
        return f"{head} from pageable host memory [{v.code}]: the source was built by `{birth.factory}` at {birth.site} with a pin_memory= that evaluated to False at run time; make it true there"
    if birth.pinnable:
        return f"{head} from pageable host memory [{v.code}]: the source was built by `{birth.factory}` at {birth.site} without pin_memory=; pin it there"
    why = f" ({birth.note})" if birth.note else ""
    return f"{head} from pageable host memory [{v.code}]: the source was built by `{birth.factory}`{why} at {birth.site}, which cannot pin; stage it into a pinned buffer"
