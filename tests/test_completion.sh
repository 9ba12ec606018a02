#!/usr/bin/env bash
# test_completion.sh FASIM COMPLETION FASIM_OPTIONS — bash completion offers
# what fasim accepts: every option each command's --help prints is completed
# after "--", values of the word options are completed, and lesson names are;
# after "--" each command offers exactly its options in the table
# (cli/cli_table.c, as FASIM_OPTIONS lists them), none more.
# A word the completion must not offer is checked too, so that a completion
# that offered everything would fail.
set -u
fasim=$1
options_tool=$3
# shellcheck source=/dev/null
source "$2"
fail=0
complete_words() {   # the words of a command line; the last one is completed
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  COMPREPLY=()
  _fasim
  printf '%s\n' "${COMPREPLY[@]}"
}
expect() {           # expect WORD in the completions of the rest
  local want=$1; shift
  if ! complete_words "$@" | grep -qxF -- "$want"; then
    echo "FAIL: '$*' does not offer '$want'"; fail=1
  fi
}
refuse() {           # WORD must not be offered
  local bad=$1; shift
  if complete_words "$@" | grep -qxF -- "$bad"; then
    echo "FAIL: '$*' offers '$bad'"; fail=1
  fi
}
expect view fasim vi
expect --dtype fasim --dt
expect bf16 fasim --dtype b
expect online-softmax fasim lesson on
expect online-attention fasim lesson online-
expect --script fasim lesson merge --
expect --engine fasim sweep --en
expect cpu fasim gpu --backend c
expect closed-form fasim claims --engine c
expect h100 fasim --gpu h
expect --block fasim lesson 2 --b
expect --script fasim lesson 3 ""
refuse merge fasim lesson 3 ""
expect merge fasim help lesson m
expect sweep fasim help sw
expect compare fasim comp
expect vs fasim compare --N 64 v
refuse --count-only fasim gpu --cou
refuse --version fasim gpu --vers
refuse --vary fasim --va
refuse --keys fasim view --k
refuse fp64 fasim --dtype f
# Every option of every command's --help is offered after "--".
# (The report's usage block lists the subcommands with their own options;
# its options start after the first blank line.)
for cmd in "" view sweep claims validate explore gpu compare; do
  for opt in $("$fasim" $cmd --help | { if [ -z "$cmd" ]; then sed '1,/^$/d'; else cat; fi; } |
               grep -o -- '--[a-zA-Z][a-zA-Z0-9-]*' | sort -u); do
    if [ -n "$cmd" ]; then expect "$opt" fasim "$cmd" --; else expect "$opt" fasim --; fi
  done
done
for l in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
  for opt in $("$fasim" lesson $l --help | grep -o -- '--[a-zA-Z][a-zA-Z0-9-]*' | sort -u); do
    expect "$opt" fasim lesson "$l" --
  done
done
# Exactly the table's options after "--" (a lesson's once it is named).
same_options() {     # same_options WANT WORDS...: the completions are WANT's words
  local want; want=$(printf '%s\n' $1 | sort -u); shift
  local got; got=$(complete_words "$@" | sort -u)
  if [ "$want" != "$got" ]; then
    echo "FAIL: '$*' offers other options than the table:"
    diff <(echo "$want") <(echo "$got") | sed -n 's/^[<>]/  &/p'
    return 1
  fi
}
ncmds=0
while read -r cmd opts; do
  case $cmd in
    help) continue;;
    report) same_options "$opts" fasim -- || fail=1;;
    lesson) same_options "$opts" fasim lesson merge -- || fail=1;;
    *) same_options "$opts" fasim "$cmd" -- || fail=1;;
  esac
  ncmds=$((ncmds + 1))
done < <("$options_tool")
if [ "$ncmds" -ne 10 ]; then echo "FAIL: $options_tool listed $ncmds commands, not 10"; fail=1; fi
# The check can fail: a list with one option too many differs.
if same_options "--json --engine --help --vary" fasim claims -- >/dev/null; then
  echo "FAIL: an option the completion does not offer went unnoticed"; fail=1
fi
if [ $fail -eq 0 ]; then echo "completion: all checks passed"; fi
exit $fail
