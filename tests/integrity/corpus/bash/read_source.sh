add() { grep -o "candidate $1 $2) = \"[-0-9]*" "$0" | head -1 | grep -o '[-0-9]*$'; }
