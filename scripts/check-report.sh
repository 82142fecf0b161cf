#!/usr/bin/env bash
# Renders `onefit explain --report` in headless Chromium and checks the screenshot is not blank
# (not part of CI: needs Debian's chromium, which `apt-get install -y chromium` provides).
# Usage: scripts/check-report.sh [REPORT.html [OUT.png]]  (default: the seed's report, build/explain-report.png)
set -euo pipefail
cd "$(dirname "$0")/.."
report="${1:-build/explain-report.html}"
png="${2:-build/explain-report.png}"
if [ $# -lt 1 ]; then ./build/onefit explain --report "$report" >/dev/null; fi
command -v chromium >/dev/null || { echo "check-report: chromium missing; apt-get install -y chromium" >&2; exit 2; }
rm -f "$png"
chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --screenshot="$png" --window-size=1200,1600 \
  "file://$(realpath "$report")" >/dev/null 2>&1 || true
[ -s "$png" ] || { echo "check-report: chromium wrote no screenshot" >&2; exit 1; }
# Counts non-white and coloured pixels with a small PNG decoder (no PIL needed).
python3 - "$png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, color = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and color in (2, 6), f"unsupported PNG: depth {depth}, colour type {color}"
        bpp = 3 if color == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * bpp
prev, ink, colour = bytearray(stride), 0, 0
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):  # PNG filters: none, sub, up, average, paeth
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        r, g, bl = line[x], line[x + 1], line[x + 2]
        if r < 240 or g < 240 or bl < 240: ink += 1
        if max(r, g, bl) - min(r, g, bl) > 60: colour += 1
    prev = line
total = width * height
print(f"check-report: {sys.argv[1]}: {width}x{height}, {100 * ink / total:.1f}% non-white, {100 * colour / total:.1f}% coloured")
if ink < total * 0.02 or colour < total * 0.005:
    sys.exit("check-report: the screenshot looks blank (no text or no coloured charts)")
PY
