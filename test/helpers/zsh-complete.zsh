# Prints the matches zsh's completion system offers for a command line, one per line.
# Usage: zsh -f zsh-complete.zsh FPATH_DIR 'agyctl settings set-auth '
# It starts an interactive zsh in a pseudo-terminal (zsh/zpty), loads compinit
# with FPATH_DIR first on $fpath (where the generated _agyctl lives, as a user
# installs it), types the line and a TAB, and captures what compadd is given.
# After the approach of github.com/Valodim/zsh-capture-completion.
zmodload zsh/zpty
fndir=$1
line=$2
init=$(mktemp)
cat > $init <<INIT
PROMPT=
fpath=($fndir \$fpath)
autoload -U compinit
compinit -u -D
bindkey '^M' undefined
bindkey '^J' undefined
bindkey '^I' complete-word
null-line () { echo -E - \$'\0' }
compprefuncs=( null-line )
comppostfuncs=( null-line exit )
zstyle ':completion:*' list-grouped false
zstyle ':completion:*' insert-tab false
zstyle ':completion:*' list-separator ''
compadd () {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "\$@"
    return \$?
  fi
  typeset -a __hits
  builtin compadd -A __hits "\$@"
  [[ -n \$__hits ]] || return
  local h
  for h in \$__hits; do echo -E - "MATCH:\$h"; done
}
INIT
zpty z zsh -f -i
zpty -w z "source $init"
zpty -w z "$line"$'\t'
integer seen=0
while zpty -r z chunk; do
  out+=$chunk
  [[ $out == *$'\0'*$'\0'* ]] && break
done
zpty -d z
rm -f $init
print -r -- "$out" | tr -d '\r' | tr -d '\000' | grep -a '^MATCH:' | sed 's/^MATCH://' | sort -u
