#!/usr/bin/env python3
"""Fails on a reference into notes/ that leads nowhere.

Checked, in every tracked text file: each path `notes/...` names a file or folder that exists;
each section it quotes (`notes/measuring.md`, "Timing in turns") begins a heading of that file. In the notes
themselves: each relative link `[text](target#anchor)` reaches an existing file and one of its
headings (GitHub's anchors), and each quoted title ("Timing in turns") that begins a heading of
another notes file but none of its own is a link instead, so that a reader finds it.

    scripts/notes-links.py
"""
import re, subprocess, sys, pathlib, collections

ROOT = pathlib.Path(__file__).resolve().parent.parent
TEXT = (".md", ".rs", ".cu", ".cuh", ".sh", ".py", ".toml", ".mjs", ".txt")


def anchors(md):
    """The GitHub anchors of a markdown file's headings, and the headings' texts."""
    seen, out, titles = collections.Counter(), set(), []
    fence = False
    for line in md.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.*)", line)
        if not m:
            continue
        title = m.group(1).strip()
        titles.append((line.startswith("# "), re.sub(r"[`*]", "", title)))
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        out.add(slug if not seen[slug] else f"{slug}-{seen[slug]}")
        seen[slug] += 1
    return out, titles


def main():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    notes = {f: anchors(ROOT / f) for f in files if f.startswith("notes/") and f.endswith(".md")}
    bad = []

    def starts_a_heading(f, title, top=True):
        title = " ".join(title.split()).rstrip(".,")
        return any(h.startswith(title) for h1, h in notes[f][1] if top or not h1)

    for f in files:
        if not f.endswith(TEXT) or (f.startswith("notes/runs/") and not f.endswith("README.md")):
            continue
        text = (ROOT / f).read_text(errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            where = f"{f}:{n}"
            for m in re.finditer(r"notes/[\w./<>*-]*[\w/](#[\w-]+)?", line):
                path, anchor = m.group(0).partition("#")[::2]
                if re.search(r"[<*]|NN", path):  # a pattern, not a path
                    continue
                if not (ROOT / path).exists():
                    bad.append(f"{where}: {path} does not exist")
                    continue
                if anchor and (path not in notes or anchor not in notes[path][0]):
                    bad.append(f"{where}: {path}#{anchor}: no such heading")
                    continue
                quoted = re.match(r"`?\)?,? \"([^\"]+)\"", line[m.end():])
                if quoted and path in notes and not starts_a_heading(path, quoted.group(1)):
                    bad.append(f"{where}: no section \"{quoted.group(1)}\" in {path}")
            for m in re.finditer(r"\"([^\"]+)\" in `?(notes/[\w./-]+\.md)", line):
                if m.group(2) in notes and not starts_a_heading(m.group(2), m.group(1)):
                    bad.append(f"{where}: no section \"{m.group(1)}\" in {m.group(2)}")
            if f not in notes:
                continue
            for m in re.finditer(r"\]\(([^)\s]+)\)", line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):
                    continue
                path, _, anchor = target.partition("#")
                dest = (ROOT / f).parent / path if path else ROOT / f
                rel = dest.resolve().relative_to(ROOT).as_posix() if dest.exists() else None
                if rel is None:
                    bad.append(f"{where}: link to {target}: no such file")
                elif anchor and (rel not in notes or anchor not in notes[rel][0]):
                    bad.append(f"{where}: link to {target}: no such heading")
        if f not in notes:
            continue
        # A quoted title may run over a line break.
        for m in re.finditer(r"(?<![\[\w])\"([A-Z][^\"]{3,}?)\"(?!\]\()", text):
            title = m.group(1)
            if "\n\n" in title or starts_a_heading(f, title):
                continue
            elsewhere = [g for g in notes if g != f and starts_a_heading(g, title, top=False)]
            around = text[max(0, m.start() - 80) : m.end() + 120]
            if elsewhere and not any(g.split("/")[-1] in around for g in elsewhere):
                n = text.count("\n", 0, m.start()) + 1
                bad.append(f"{f}:{n}: \"{' '.join(title.split())}\" is a section of {', '.join(elsewhere)}: link it")
    for b in bad:
        print(b)
    if bad:
        print(f"notes links: {len(bad)} broken")
        return 1
    print(f"notes links: {len(notes)} notes files, every reference into notes/ resolves")
    return 0


if __name__ == "__main__":
    sys.exit(main())
