"""Step 2 of the pipeline: read a file's bytes and decode them the way Python would.

Encodings follow PEP 263 (coding cookie, UTF-8 BOM, UTF-8 default); the original encoding,
BOM and dominant line ending are kept so that the fixer can write the file back byte-faithfully.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_BLANK = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)")


class DecodeError(Exception):
    """The bytes are not valid in the file's declared (or default) encoding."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str
    bom: bool
    newline: str


def _declared_encoding(data: bytes) -> tuple[str, bool]:
    bom = data.startswith(codecs.BOM_UTF8)
    if bom:
        data = data[3:]
    lines = data.split(b"\n", 2)[:2]
    for i, line in enumerate(lines):
        match = _COOKIE.match(line)
        if match:
            name = match.group(1).decode("ascii", "replace")
            try:
                info = codecs.lookup(name)
            except LookupError as exc:
                raise DecodeError(f"unknown encoding in coding cookie: {name!r}") from exc
            # rot13, hex, base64, zlib... are codecs but not text encodings (Python rejects
            # them as source encodings too); decoding with them would raise anything.
            if not getattr(info, "_is_text_encoding", True):
                raise DecodeError(f"coding cookie names a non-text codec: {name!r}")
            name = info.name
            if bom and name != "utf-8":
                raise DecodeError(f"UTF-8 BOM but coding cookie says {name!r}")
            return name, bom
        # The cookie may only be on line 2 when line 1 is blank or a comment.
        if i == 0 and not _BLANK.match(line):
            break
    return "utf-8", bom


def detect_newline(text: str) -> str:
    if "\r" not in text:
        return "\n"  # most files: one fast scan instead of two counts
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf > lf:
        return "\r\n"
    if lf == 0 and "\r" in text:
        return "\r"
    return "\n"


def decode(data: bytes) -> Decoded:
    if b"\x00" in data:
        raise DecodeError("source contains null bytes")
    encoding, bom = _declared_encoding(data)
    payload = data[3:] if bom else data
    try:
        text = payload.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DecodeError(f"invalid {encoding} at byte {exc.start + (3 if bom else 0)}: {exc.reason}") from exc
    except (UnicodeError, LookupError, ValueError, TypeError) as exc:  # e.g. the "undefined" codec
        raise DecodeError(f"cannot decode as {encoding}: {exc}") from exc
    return Decoded(text=text, encoding=encoding, bom=bom, newline=detect_newline(text))


def encode(text: str, decoded: Decoded) -> bytes:
    data = text.encode(decoded.encoding)
    return codecs.BOM_UTF8 + data if decoded.bom else data
