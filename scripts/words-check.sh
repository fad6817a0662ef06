#!/usr/bin/env bash
# The repository speaks of the project: measurements are named by GPU, date and commit, never by
# how the work was organised. Fails on such words in the book, the notes and every README.
#   scripts/words-check.sh
set -u
cd "$(dirname "$0")/.."
# "the issue" of a work tracker, not a GPU's issue slots or issue rate.
pattern='\b(sessions?|sprints?|stand-?ups?|sub-?agents?|coordinators?|closing notes?|work ?items?|tickets?|backlogs?|the issue(?! (slot|rate|width|port))|issue #[0-9]+|issue'"'"'s owner|the workplace|device machines?|device time)\b'
files=$(git ls-files 'book/src/*.md' 'notes/*.md' 'notes/**/*.md' '*README.md' 'CONTRIBUTING.md' 'notes/experiments/**')
hits=$(grep -niP "$pattern" $files)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "words about how the work was organised (name measurements by GPU, date and commit instead): $(echo "$hits" | wc -l) lines"
  exit 1
fi
echo "words check: $(echo "$files" | wc -w) files, none speaks of how the work was organised"
