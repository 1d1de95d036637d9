# An independent reading of an XPlane file (tsl/profiler/protobuf/xplane.proto) from the
# protobuf wire format, without protoc: planes, lines, events, stats. With a second argument it
# prints the kernel count and total duration (ps) per /device:GPU plane over its "Stream #" lines.
# Usage: python3 tests/oracle/xplane_dump.py FILE.xplane.pb [totals]
# A protobuf wire-format reader for XSpace (tensorflow/tsl profiler xplane.proto), written
# without protoc: planes -> lines -> events with their names and stats.
import sys, collections
def varint(b, i):
    x = s = 0
    while True:
        c = b[i]; i += 1; x |= (c & 0x7f) << s; s += 7
        if c < 0x80: return x, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: v, i = varint(b, i)
        elif w == 1: v = b[i:i+8]; i += 8
        elif w == 2:
            n, i = varint(b, i); v = b[i:i+n]; i += n
        elif w == 5: v = b[i:i+4]; i += 4
        else: raise ValueError(w)
        yield f, v
def signed(v): return v - (1 << 64) if v >= 1 << 63 else v
def plane(b):
    p = {"name": "", "lines": [], "em": {}, "sm": {}}
    for f, v in fields(b):
        if f == 2: p["name"] = v.decode()
        elif f == 3: p["lines"].append(line(v))
        elif f in (4, 5):
            key = None; val = None
            for ff, vv in fields(v):
                if ff == 1: key = signed(vv)
                elif ff == 2: val = vv
            name = ""; 
            for ff, vv in fields(val or b""):
                if ff == 2: name = vv.decode(errors="replace")
            (p["em"] if f == 4 else p["sm"])[key] = name
    return p
def line(b):
    l = {"name": "", "ts": 0, "events": []}
    for f, v in fields(b):
        if f == 2: l["name"] = v.decode()
        elif f == 3: l["ts"] = signed(v)
        elif f == 11: l["display"] = v.decode()
        elif f == 4:
            e = {"md": 0, "off": 0, "dur": 0, "stats": []}
            for ff, vv in fields(v):
                if ff == 1: e["md"] = signed(vv)
                elif ff == 2: e["off"] = signed(vv)
                elif ff == 3: e["dur"] = signed(vv)
                elif ff == 4:
                    st = {}
                    for f3, v3 in fields(vv):
                        st[f3] = v3
                    e["stats"].append(st)
            l["events"].append(e)
    return l
data = open(sys.argv[1], "rb").read()
planes = [plane(v) for f, v in fields(data) if f == 1]
for p in planes:
    print("PLANE", p["name"], "lines", len(p["lines"]))
    for l in p["lines"]:
        names = collections.Counter(p["em"].get(e["md"], "?")[:50] for e in l["events"])
        print("   LINE", repr(l["name"]), len(l["events"]), "events, total dur ps", sum(e["dur"] for e in l["events"]), list(names.items())[:2])
    if p["name"].startswith("/device:GPU"):
        l = next((l for l in p["lines"] if l["events"]), None)
        if l:
            e = l["events"][0]
            print("   first event stats:", [(p["sm"].get(signed(s.get(1,0))), {k: (v if not isinstance(v, bytes) else v[:80]) for k, v in s.items() if k != 1}) for s in e["stats"]])
if len(sys.argv) > 2:
    p = planes[2]  # /device:GPU:1
    for e in p["lines"][0]["events"][:2]:
        for s in e["stats"]:
            n = p["sm"].get(signed(s.get(1, 0)))
            if 7 in s: print(n, "=", repr(p["sm"].get(s[7])))
            elif 5 in s: print(n, "=", s[5])
            else: print(n, s)
    tot = {}
    for p in planes:
        if p["name"].startswith("/device:GPU"):
            n = sum(len(l["events"]) for l in p["lines"] if l["name"].startswith("Stream #"))
            d = sum(e["dur"] for l in p["lines"] if l["name"].startswith("Stream #") for e in l["events"])
            tot[p["name"]] = (n, d)
    print(tot, sum(v[0] for v in tot.values()), sum(v[1] for v in tot.values()))
