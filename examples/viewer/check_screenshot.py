#!/usr/bin/env python3
"""Checks a viewer screenshot: a PNG of the expected size in which a scene was drawn.

Reads the PNG with the standard library only (8-bit RGB or RGBA, not interlaced), then counts
pixels: those that differ from the viewer's background (Renderer::kBackground), and the warm ones
(red well above green and blue), which only the cloths are drawn in. An empty frame, a frame with
only the panel, or one where the cloth fell out of view fails.
"""
import argparse
import struct
import sys
import zlib

BACKGROUND = (round(0.16 * 255), round(0.18 * 255), round(0.22 * 255))


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA, not interlaced (got depth {depth}, colour {colour})")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("png")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--min-drawn", type=float, default=0.10, help="share of pixels that are not background")
    parser.add_argument("--min-cloth", type=float, default=0.01, help="share of warm (cloth) pixels")
    args = parser.parse_args()
    width, height, channels, rows = read_png(args.png)
    if (width, height) != (args.width, args.height):
        sys.exit(f"FAIL {args.png}: {width} x {height}, expected {args.width} x {args.height}")
    drawn = warm = 0
    for line in rows:
        for i in range(0, len(line), channels):
            r, g, b = line[i], line[i + 1], line[i + 2]
            if max(abs(r - BACKGROUND[0]), abs(g - BACKGROUND[1]), abs(b - BACKGROUND[2])) > 2:
                drawn += 1
            if r >= g + 20 and r >= b + 20:
                warm += 1
    total = width * height
    verdict = drawn / total >= args.min_drawn and warm / total >= args.min_cloth
    print(f"{'ok' if verdict else 'FAIL'} {args.png}: {width} x {height}, {100 * drawn / total:.1f} % drawn "
          f"(>= {100 * args.min_drawn:.0f} %), {100 * warm / total:.1f} % cloth (>= {100 * args.min_cloth:.0f} %)")
    sys.exit(0 if verdict else 1)


if __name__ == "__main__":
    main()
