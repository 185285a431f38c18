# bash completion for myriad and myriad-mpi (installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/myriad). The subcommands and each one's options are
# read from the binary's own --help, once per shell and command, so the completion says what the
# installed binary takes and cannot drift from it.

# _myriad_words PROG [CMD]: the subcommands of PROG, or CMD's options and (find) predicates.
_myriad_words() {
	local prog=$1 cmd=$2 key
	key=_MYRIAD_CACHE_${cmd:-top}
	key=${key//-/_}
	if [ -z "${!key+x}" ]; then
		local words
		if [ -z "$cmd" ]; then
			words=$("$prog" --help 2>/dev/null | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')
		else
			# Long and short options, and find's predicates, as --help spells them.
			words=$("$prog" "$cmd" --help 2>/dev/null | grep -oE '(^|[ ,;(])--?[a-zA-Z][a-zA-Z0-9-]*' |
				sed -E 's/^[ ,;(]//' | sort -u)
		fi
		printf -v "$key" '%s' "$words"
	fi
	printf '%s\n' "${!key}"
}

_myriad() {
	local cur prev prog=$1 cmd="" i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-*) ;;
		*) cmd=${COMP_WORDS[i]} && break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_myriad_words "$prog") --help --version" -- "$cur")
		return
	fi
	# Options that take a file or directory complete names; the others their own words.
	case $prev in
	-o | --output | --json | --errors | --state | --out | --image-dir | --manifest | -fprint | -fprintf | \
		-newer | -samefile)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return
		;;
	esac
	case $cur in
	-*) mapfile -t COMPREPLY < <(compgen -W "$(_myriad_words "$prog" "$cmd")" -- "$cur") ;;
	*) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	esac
}
complete -F _myriad -o filenames myriad myriad-mpi
