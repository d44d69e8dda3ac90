#!/usr/bin/env python3
"""sample.py: how right corral's activity is against what the screen of a
real agent CLI shows (issue 20), sampled every 100 ms from the host side.

  sample.py run ID OUT       sample lease ID into OUT (JSON lines) until
                             it ends or this is killed
  sample.py score MOCKLOG OUT...
                             score the samples against the truth; print
                             one table row per file and the total, as JSON
                             on the last line

The truth of a sample is read off its screen, the mock model's log and
the times the test pressed Enter (ENTERS, one ms time a line, beside
MOCKLOG), not from corral's rules: blocked while a dialog's words show (a
permission, trust or key question, a confirm/cancel footer); working
from an Enter to the end of the model reply it started, while a reply
streams, or while the CLI's status line says "to interrupt"; nothing yet
(not judged) while the screen is still empty; else prompt. Each sample
is one `corral ls --json` between two `corral screen`s, timed at its
middle; when the truth of the two differs, the screen changed under it
and it is not judged.

Figures: right = samples whose activity is the truth, outside the 300 ms
after each change of the truth (a spinner's frames are no change); dialog_wrong = samples of a dialog up
for more than 200 ms shown as anything but blocked; latency = from each
change of the truth to the first sample showing it (p50, p95).
"""
import json
import os
import re
import subprocess
import sys
import time

CORRAL = os.environ.get("CORRAL_BIN", "corral")
DIALOG = re.compile(r"Do you want to|Would you like to (run|make)|"
                    r"Trust this folder|trust this folder|use this API key|"
                    r"Enter to confirm|Press enter to confirm")
WORKING = re.compile(r"to interrupt")
SETTLE_MS = 300
DIALOG_MS = 200
PERIOD_S = 0.1


def now_ms():
    return time.time() * 1000.0


def screen(lease):
    return subprocess.run([CORRAL, "screen", lease], capture_output=True,
                          text=True, errors="replace").stdout


def run(lease, out):
    with open(out, "w") as f:
        while True:
            t0 = now_ms()
            scr = screen(lease)
            ls = subprocess.run([CORRAL, "ls", "--json"],
                                capture_output=True, text=True).stdout
            t1 = now_ms()
            after = screen(lease)
            act = None
            try:
                for r in json.loads(ls or "[]"):
                    if r.get("id") == lease:
                        act = r.get("activity")
            except ValueError:
                pass
            if act is None:
                return 0   # the lease is gone from the live list: ended
            f.write(json.dumps({"t": (t0 + t1) / 2, "activity": act,
                                "screen": scr, "after": after if after !=
                                scr else None}) + "\n")
            f.flush()
            if act in ("done", "failed", "cancelled"):
                return 0
            left = PERIOD_S - (now_ms() - t0) / 1000.0
            if left > 0:
                time.sleep(left)


def replies(mocklog):
    """[(start_ms, end_ms)] of each model reply."""
    start, spans = {}, []
    for line in open(mocklog):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("api") is not None:
            start[e["n"]] = e["t"] * 1000.0
        elif "done" in e and e["done"] in start:
            spans.append((start.pop(e["done"]), e["t"] * 1000.0))
    return spans


def enters(mocklog, spans):
    """[(enter_ms, end of the reply it started)]; a reply within 5 s."""
    path = os.path.join(os.path.dirname(mocklog), "enters")
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        try:
            t = float(line)
        except ValueError:
            continue
        after = [b for a, b in spans if t <= a <= t + 5000]
        if after:
            out.append((t, min(after)))
    return out


def truth(s, spans):
    if not s["screen"].strip():
        return None
    if DIALOG.search(s["screen"]):
        return "blocked"
    if WORKING.search(s["screen"]) or any(a <= s["t"] <= b
                                          for a, b in spans):
        return "working"
    return "prompt"


def score(samples, spans):
    right = judged = dialog_wrong = 0
    changed_at = dialog_since = None
    lat, pending, prev_truth = [], None, None
    for s in samples:
        if s["activity"] in ("done", "failed", "cancelled"):
            break
        tr = truth(s, spans)
        if tr is None:
            continue
        moved = s.get("after") is not None and \
            truth({"t": s["t"], "screen": s["after"]}, spans) != tr
        s["moved"] = moved
        if tr != prev_truth or moved:
            changed_at = s["t"]
        if tr == "blocked":
            dialog_since = dialog_since if prev_truth == "blocked" \
                else s["t"]
            if s["t"] - dialog_since > DIALOG_MS and \
                    s["activity"] != "blocked" and not s.get("moved"):
                dialog_wrong += 1
        if tr != prev_truth:
            pending = s["t"]
        if pending is not None and s["activity"] == tr:
            lat.append(s["t"] - pending)
            pending = None
        if s["t"] - changed_at > SETTLE_MS:
            judged += 1
            right += s["activity"] == tr
        prev_truth = tr
    lat.sort()

    def pct(p):
        return round(lat[min(len(lat) - 1, int(len(lat) * p))]) \
            if lat else None
    return {"samples": len(samples), "judged": judged, "right": right,
            "right_pct": round(100.0 * right / judged, 1) if judged else None,
            "dialog_wrong": dialog_wrong, "transitions": len(lat),
            "latency_p50_ms": pct(0.5), "latency_p95_ms": pct(0.95),
            "lat": [round(x) for x in lat]}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "run":
        return run(sys.argv[2], sys.argv[3])
    if len(sys.argv) >= 4 and sys.argv[1] == "score":
        spans = replies(sys.argv[2])
        spans += enters(sys.argv[2], spans)
        total = {"samples": 0, "judged": 0, "right": 0, "dialog_wrong": 0,
                 "transitions": 0}
        lat = []
        for path in sys.argv[3:]:
            samples = [json.loads(l) for l in open(path) if l.strip()]
            r = score(samples, spans)
            lat += r.pop("lat")
            print("%s: %s" % (os.path.basename(path), json.dumps(r)))
            for k in total:
                total[k] += r[k]
        lat.sort()
        total["right_pct"] = round(100.0 * total["right"] /
                                   total["judged"], 1) if total["judged"] \
            else None
        total["latency_p50_ms"] = lat[len(lat) // 2] if lat else None
        total["latency_p95_ms"] = lat[min(len(lat) - 1,
                                          int(len(lat) * 0.95))] \
            if lat else None
        print(json.dumps(total))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
