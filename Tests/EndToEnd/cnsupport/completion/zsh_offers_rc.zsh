# Loaded by zsh_offers.zsh into its interactive zsh: compinit, and Tab bound to a completion widget that
# prints what it offered instead of showing it. Return never runs the line.
PROMPT=''
fpath=($OFFERS_FPATH $fpath)
autoload -Uz compinit && compinit -u -d $OFFERS_FPATH/.zcompdump
typeset -aU offered
compadd() { builtin compadd -O reply "$@"; offered+=("$reply[@]"); builtin compadd "$@"; }
print-offers() {
    offered=()
    _main_complete "$@"
    print -n $'\C-B'
    print -nlr -- "$offered[@]"
    print -n $'\C-C'
}
zle -C print-offers complete-word print-offers
bindkey '^I' print-offers
bindkey '^M' undefined-key
bindkey '^J' undefined-key
print ready
