import zlib, struct, sys
def read_png(path):
    d = open(path, 'rb').read(); assert d[:8] == b'\x89PNG\r\n\x1a\n'
    i = 8; idat = b''
    while i < len(d):
        n, t = struct.unpack('>I4s', d[i:i+8]); c = d[i+8:i+8+n]; i += 12 + n
        if t == b'IHDR': w, h, bd, ct = struct.unpack('>IIBB', c[:10])
        elif t == b'IDAT': idat += c
    assert bd == 8 and ct == 2
    raw = zlib.decompress(idat); bpp = 3; stride = w * 3
    rows = []; prev = bytearray(stride); p = 0
    for y in range(h):
        f = raw[p]; line = bytearray(raw[p+1:p+1+stride]); p += 1 + stride
        for x in range(stride):
            a = line[x-bpp] if x >= bpp else 0; b = prev[x]; cc = prev[x-bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pp = a + b - cc; pa, pb, pc = abs(pp-a), abs(pp-b), abs(pp-cc)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
                line[x] = (line[x] + pr) & 255
        rows.append(line); prev = line
    return w, h, rows
path, ox, oy, x, y, rw, rh = sys.argv[1], *map(int, sys.argv[2:])
w, h, rows = read_png(path)
black = tot = 0
for yy in range(y-oy, y-oy+rh):
    for xx in range(x-ox, x-ox+rw):
        if 0 <= yy < h and 0 <= xx < w:
            tot += 1; px = rows[yy][xx*3:xx*3+3]
            if px == b'\0\0\0': black += 1
print(f"rect ({x},{y},{rw}x{rh}): {black}/{tot} black pixels")
