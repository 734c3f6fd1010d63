# zsh -f zsh_offers.zsh 'words typed': what zsh's completion system offers after the words, one per line.
# An interactive zsh on a pseudo-terminal loads zsh_offers_rc.zsh (compinit with $OFFERS_FPATH first on
# $fpath), is sent the words and a Tab, and prints every match given to compadd between ^B and ^C.
zmodload zsh/zpty
zpty session zsh -f -i
zpty -w session "source ${(q)${0:A:h}}/zsh_offers_rc.zsh"
zpty -r -m session line '*ready*' || exit 3
zpty -w -n session "$1"$'\t'
zpty -r -m session line $'*\C-B' || exit 4
zpty -r -m session line $'*\C-C' || exit 5
zpty -d session
print -rn -- "${line%$'\C-C'}" | tr -d '\r'
