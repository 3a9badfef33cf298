#!/usr/bin/env python3
"""Host test of the Markdown: python3 check_links.py REPOSITORY_ROOT

Every link and image in the project's Markdown files resolves inside the repository: the file
exists and, for a link with #anchor, the heading exists. Links outside the repository (http:,
https:, or a path that climbs out of it) are errors: the course cites its sources by name.
"""
import pathlib
import re
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(markdown):
    """The anchors a code host gives the headings of a Markdown file."""
    found = set()
    in_code = False
    for line in markdown.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif line.startswith("#") and not in_code:
            text = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def problems(root):
    found = []
    files = sorted(p for p in root.rglob("*.md") if not any(part in ("build", ".git") or part.startswith("build")
                                                             for part in p.relative_to(root).parts))
    for md in files:
        in_code = False
        for number, line in enumerate(md.read_text().splitlines(), 1):
            if line.startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                where = f"{md.relative_to(root)}:{number}"
                if re.match(r"[a-z]+:", target):
                    found.append(f"{where}: {target} points outside the repository")
                    continue
                path, _, anchor = target.partition("#")
                resolved = (md.parent / path).resolve() if path else md
                if root not in resolved.parents and resolved != root:
                    found.append(f"{where}: {target} leaves the repository")
                elif not resolved.exists():
                    found.append(f"{where}: {target}: no such file")
                elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                    found.append(f"{where}: {target}: {resolved.relative_to(root)} has no heading #{anchor}")
    return found, len(files)


def self_test():
    """The checker itself must fail on broken links (a check that cannot fail is no check)."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "notes").mkdir()
        (root / "notes" / "a.md").write_text("# A title\n\n## 2. Some section\n")
        (root / "README.md").write_text(
            "[ok](notes/a.md#2-some-section) `[code](nowhere.md)`\n[bad anchor](notes/a.md#3-missing)\n"
            "![missing picture](notes/pic.svg)\n[web](https://example.com)\n[out](../outside.md)\n")
        found, _ = problems(root)
        assert len(found) == 4, found
        for part in ("#3-missing", "pic.svg", "outside the repository", "leaves the repository"):
            assert any(part in f for f in found), (part, found)
    print("self-test: the checker finds broken anchors, missing files, web links and links out")


if __name__ == "__main__":
    if sys.argv[1] == "--self-test":
        self_test()
        sys.exit(0)
    root = pathlib.Path(sys.argv[1]).resolve()
    found, count = problems(root)
    print("\n".join(found) or f"{count} Markdown files: every link and image resolves inside the repository")
    sys.exit(1 if found else 0)
