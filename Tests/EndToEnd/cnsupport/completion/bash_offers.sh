# bash bash_offers.sh SCRIPT 'words typed': what bash offers after the words, one per line, through the
# function SCRIPT registers with `complete -F` (called as bash calls it on Tab).
source "$1"
line="$2"
read -ra COMP_WORDS <<<"$line"
[[ "$line" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$line"
COMP_POINT=${#line}
function_name="$(complete -p cloudnotes | sed -n 's/.* -F \([^ ]*\) .*/\1/p')"
"$function_name" cloudnotes "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
