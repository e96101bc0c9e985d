"""A small PNG reader for the UI tests' screenshots (8-bit RGB/RGBA/grey, not interlaced — what
Chromium writes): the pixels, to tell a rendered page from a blank one without an imaging library."""

from __future__ import annotations

import struct
import zlib

import numpy as np

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and each row's raw pixel bytes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = depth = colour = interlace = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    assert depth == 8 and colour in _CHANNELS and not interlace, (depth, colour, interlace)
    bpp = _CHANNELS[colour]
    stride = width * bpp
    raw = zlib.decompress(idat)
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f in (0, 1, 2):  # None, Sub and Up at numpy speed (Chromium's most common)
            arr = np.frombuffer(line, dtype=np.uint8)
            if f == 2:
                arr = arr + np.frombuffer(bytes(prev), dtype=np.uint8)
            elif f == 1:
                arr = (np.cumsum(arr.reshape(-1, bpp).astype(np.int64), axis=0) & 0xFF).astype(np.uint8).ravel()
            line = bytearray(arr.tobytes())
            rows.append(bytes(line))
            prev = line
            continue
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif f == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, rows


def distinct_colours(data: bytes, step: int = 4) -> int:
    """How many different pixel values a sample of the image holds (every ``step``-th pixel)."""
    width, _, rows = read_png(data)
    bpp = len(rows[0]) // width if rows else 1
    seen = set()
    for row in rows[::step]:
        for x in range(0, width, step):
            seen.add(row[x * bpp:(x + 1) * bpp])
    return len(seen)
