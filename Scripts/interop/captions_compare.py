#!/usr/bin/env python3
"""Compares CastPrep's WebVTT output with other caption tools (used by Scripts/interop/captions
and by Tests/CaptionsTests/InteropTests.swift).

    captions_compare.py webvtt   OURS.vtt                 # webvtt-py reads our file: same cues, same times
    captions_compare.py ffmpeg   OURS.vtt INPUT.srt|.ass  # ffmpeg's own conversion has the same cue times
    captions_compare.py pycaption OURS.vtt INPUT.scc|.dfxp [--tolerance MS]

Prints one JSON object ({"ok": bool, "message": str, "ours": [...], "theirs": [...]}) and exits
0 when the cue count matches and every start/end agrees within the tolerance (0 ms by default).
"""
import json
import re
import subprocess
import sys
import tempfile
import os

TIMING = re.compile(r"^((?:\d+:)?\d\d:\d\d\.\d\d\d)[ \t]+-->[ \t]+((?:\d+:)?\d\d:\d\d\.\d\d\d)")


def ms(stamp):
    parts = stamp.split(":")
    seconds = float(parts[-1])
    minutes = int(parts[-2])
    hours = int(parts[-3]) if len(parts) == 3 else 0
    return int(round(((hours * 60 + minutes) * 60 + seconds) * 1000))


def timings_from_vtt(path):
    """Timing lines of a WebVTT file, found strictly (so '-->' inside text is not a cue)."""
    result = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            match = TIMING.match(line)
            if match:
                result.append((ms(match.group(1)), ms(match.group(2))))
    return result


def compare(ours, theirs, tolerance, label):
    ok = len(ours) == len(theirs)
    message = f"{label}: {len(ours)} cues vs {len(theirs)}"
    worst = 0
    if ok:
        for (a_start, a_end), (b_start, b_end) in zip(sorted(ours), sorted(theirs)):
            worst = max(worst, abs(a_start - b_start), abs(a_end - b_end))
        ok = worst <= tolerance
        message += f", largest timing difference {worst} ms (tolerance {tolerance} ms)"
    return {"ok": ok, "message": message, "ours": sorted(ours), "theirs": sorted(theirs)}


def with_webvtt(ours_path):
    import webvtt  # pip install webvtt-py

    captions = webvtt.read(ours_path)
    theirs = [(ms(c.start), ms(c.end)) for c in captions]
    return compare(timings_from_vtt(ours_path), theirs, 0, "webvtt-py")


def with_ffmpeg(ours_path, input_path):
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "ffmpeg.vtt")
        subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i", input_path, out], check=True)
        theirs = timings_from_vtt(out)
    return compare(timings_from_vtt(ours_path), theirs, 0, "ffmpeg")


def with_pycaption(ours_path, input_path, tolerance):
    import pycaption  # pip install pycaption

    with open(input_path, encoding="utf-8") as handle:
        text = handle.read()
    reader = pycaption.SCCReader() if input_path.lower().endswith(".scc") else pycaption.DFXPReader()
    captions = reader.read(text)
    theirs = []
    for language in captions.get_languages():
        for caption in captions.get_captions(language):
            if caption.get_text().strip():
                theirs.append((int(round(caption.start / 1000)), int(round(caption.end / 1000))))
    return compare(timings_from_vtt(ours_path), theirs, tolerance, "pycaption")


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    mode, ours = argv[1], argv[2]
    tolerance = 0
    if "--tolerance" in argv:
        tolerance = int(argv[argv.index("--tolerance") + 1])
    if mode == "webvtt":
        result = with_webvtt(ours)
    elif mode == "ffmpeg":
        result = with_ffmpeg(ours, argv[3])
    elif mode == "pycaption":
        result = with_pycaption(ours, argv[3], tolerance)
    else:
        print(f"unknown mode {mode}", file=sys.stderr)
        return 64
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
