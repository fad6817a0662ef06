#!/usr/bin/env bash
# The repository speaks of the project: measurements are named by GPU, date and commit, never by
# how the work was organised. Fails on such words in the book, the notes, every README and the
# comments of the code.
#   scripts/words-check.sh
set -u
cd "$(dirname "$0")/.."
# "the issue" of a work tracker, not a GPU's issue slots or issue rate.
words='sessions?|sprints?|stand-?ups?|sub-?agents?|coordinators?|closing notes?|work ?items?|tickets?|backlogs?|the issue(?! (slot|rate|width|port))|issue #[0-9]+|issue'"'"'s owner|the workplace|device (machines?|time|tool|calls?|runs?)|GPU calls?|lent (an?|the) (H100|H200|GPU)'
# A numbered "call N" is a job of the machinery that ran the work, where "calls 3 kernels" or
# "the same call 10% apart" count something; so are its scripts, outputs and predictions by
# number (call31.sh, out51/, pred46.md, r58.sh) and its scratch programs (xe, mk_*.py).
counted='(?:kernels?|times?|GEMMs?|launch(?:es)?|functions?|rounds?|samples?|warps?|threads?|blocks?|instructions?|cycles?|bytes?|µs|ms|ns|s|seconds?|x|per|a|an|each)\b'
numbered='calls? [0-9]+(?:-[0-9]+)?(?![0-9]|(?:,[0-9]{3})*(?:\.[0-9]+)?\s*(?:%|'"$counted"'))|call[0-9]+|the call'"'"'s (time )?limit|out[0-9]+/|pred[0-9]*\.md|r[0-9]{2}\.sh|xe(\.rs)?|mk_\w+\.py|dynchk|powerrun'
pattern="\\b($words|$numbered)\\b"
files=$(git ls-files 'book/src/*.md' 'notes/*.md' 'notes/**/*.md' '*README.md' 'CONTRIBUTING.md' 'notes/experiments/**' \
  'labs/**/*.md' '*.rs' '*.cu' '*.cuh' 'scripts/*' ':!scripts/words-check.sh')
hits=$(grep -niP "$pattern" $files)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "words about how the work was organised (name measurements by GPU, date and commit instead): $(echo "$hits" | wc -l) lines"
  exit 1
fi
echo "words check: $(echo "$files" | wc -w) files, none speaks of how the work was organised"
