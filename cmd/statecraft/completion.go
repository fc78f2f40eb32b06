package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Shell completion. The scripts `statecraft completion SHELL` prints are thin: at every <TAB>
// they call the hidden `statecraft __complete SHELL WORD...` with the words typed so far (the
// last one being completed, possibly empty), and statecraft answers from its own command
// definitions, so completion never lags behind the commands. Candidates are printed one a line;
// a lone filesMarker line asks the shell for its own file-name completion.

const filesMarker = "__files__"

func init() {
	register(nil, func() *cli.Command {
		return &cli.Command{
			Name:      "completion",
			Usage:     "print the shell completion script for bash, zsh or fish",
			ArgsUsage: "bash|zsh|fish",
			Description: "Completes commands, flags, and operator selectors (uid:NAME, hash:HEX) read from the savepoint\n" +
				"named on the command line. Install:\n" +
				"  bash: statecraft completion bash > ~/.local/share/bash-completion/completions/statecraft\n" +
				"  zsh:  statecraft completion zsh > \"${fpath[1]}/_statecraft\"   (then restart zsh)\n" +
				"  fish: statecraft completion fish > ~/.config/fish/completions/statecraft.fish",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return withCode(exitFailure, fmt.Errorf("completion: want one shell: bash, zsh or fish"))
				}
				script, ok := completionScripts[c.Args().First()]
				if !ok {
					return withCode(exitFailure, fmt.Errorf("completion: unknown shell %q (want bash, zsh or fish)", c.Args().First()))
				}
				_, err := io.WriteString(c.App.Writer, script)
				return err
			},
		}
	})
	register(nil, func() *cli.Command {
		return &cli.Command{
			Name:            "__complete",
			Hidden:          true,
			SkipFlagParsing: true,
			Action: func(c *cli.Context) error {
				args := c.Args().Slice()
				if len(args) < 1 {
					return nil
				}
				shell, words := args[0], args[1:]
				if len(words) == 0 {
					words = []string{""}
				}
				writeCandidates(c.App.Writer, shell, complete(commands(), words))
				return nil
			},
		}
	})
}

// candidate is one completion: the word and a short description (shown by zsh and fish).
type candidate struct{ word, desc string }

// complete returns what may follow words[:len-1] and start with the last word. nil with
// files=true is signalled by the single candidate filesMarker.
func complete(cmds []*cli.Command, words []string) []candidate {
	cur := words[len(words)-1]
	var leaf *cli.Command
	i := 0
	for ; i < len(words)-1; i++ {
		c := findCommand(cmds, words[i])
		if c == nil || strings.HasPrefix(words[i], "-") {
			break
		}
		leaf, cmds = c, c.Subcommands
	}
	if leaf == nil || len(leaf.Subcommands) > 0 {
		if i < len(words)-1 { // an unknown word where a command belongs
			return nil
		}
		if leaf == nil && strings.HasPrefix(cur, "-") {
			return filter([]candidate{{"--help", "show help"}, {"--version", "print the version"}}, cur)
		}
		var out []candidate
		for _, c := range cmds {
			if !c.Hidden {
				out = append(out, candidate{c.Name, c.Usage})
			}
		}
		return filter(out, cur)
	}
	rest := words[i : len(words)-1] // what was typed after the command path
	if leaf.Name == "help" && len(rest) == 0 && !strings.HasPrefix(cur, "-") {
		var out []candidate
		for _, c := range commands() {
			if !c.Hidden && c.Name != "help" {
				out = append(out, candidate{c.Name, c.Usage})
			}
		}
		for _, t := range helpTopics {
			out = append(out, candidate{t.name, t.usage})
		}
		return filter(out, cur)
	}
	if leaf.Name == "completion" {
		return filter([]candidate{{"bash", ""}, {"zsh", ""}, {"fish", ""}}, cur)
	}
	// The value of a flag: --flag VALUE or --flag=VALUE.
	flagName, prefix, value := "", "", cur
	if strings.HasPrefix(cur, "--") && strings.Contains(cur, "=") {
		k := strings.IndexByte(cur, '=')
		flagName, prefix, value = strings.TrimLeft(cur[:k], "-"), cur[:k+1], cur[k+1:]
	} else if len(rest) > 0 && strings.HasPrefix(rest[len(rest)-1], "-") && !strings.Contains(rest[len(rest)-1], "=") {
		if f := findFlag(leaf, strings.TrimLeft(rest[len(rest)-1], "-")); f != nil && takesValue(f) {
			flagName = strings.TrimLeft(rest[len(rest)-1], "-")
		}
	}
	if flagName != "" {
		return withPrefix(prefix, flagValues(leaf, flagName, rest, value))
	}
	if strings.HasPrefix(cur, "-") {
		var out []candidate
		for _, f := range leaf.Flags {
			out = append(out, candidate{"--" + f.Names()[0], flagUsage(f)})
		}
		out = append(out, candidate{"--help", "show help"})
		return filter(out, cur)
	}
	return []candidate{{filesMarker, ""}}
}

func findFlag(c *cli.Command, name string) cli.Flag {
	for _, f := range c.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}

func takesValue(f cli.Flag) bool {
	_, isBool := f.(*cli.BoolFlag)
	return !isBool
}

func flagUsage(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.GetUsage()
	}
	return ""
}

// flagValues completes the value of --name. Operator selectors come from the savepoint named
// on the command line; other values are file names.
func flagValues(leaf *cli.Command, name string, rest []string, value string) []candidate {
	switch name {
	case "operator", "rename":
		ops := savepointOperators(rest)
		if name == "rename" {
			for i := range ops {
				ops[i].word += "=uid:"
			}
		}
		return filter(ops, value)
	}
	if f := findFlag(leaf, name); f != nil {
		if _, isInt := f.(*cli.IntFlag); isInt {
			return nil
		}
	}
	return []candidate{{filesMarker, ""}}
}

// savepointOperators lists the operators of the first savepoint among the words (a positional
// argument or a --savepoint value): uid:NAME where Flink stored a UID, hash:HEX otherwise.
func savepointOperators(words []string) []candidate {
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			if k := strings.IndexByte(w, '='); k >= 0 && strings.TrimLeft(w[:k], "-") == "savepoint" {
				w = w[k+1:]
			} else {
				continue
			}
		}
		p := w
		if filepath.Base(p) != savepoint.MetadataFileName {
			p = filepath.Join(p, savepoint.MetadataFileName)
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		sp, err := savepoint.Open(w)
		if err != nil {
			return nil
		}
		defer sp.Close()
		var out []candidate
		for _, r := range savepoint.MetadataRows(sp.Metadata) {
			name := deref(r.OperatorName)
			if r.OperatorUID != nil && *r.OperatorUID != "" {
				out = append(out, candidate{"uid:" + *r.OperatorUID, name})
			} else {
				out = append(out, candidate{"hash:" + r.OperatorUIDHash, name})
			}
		}
		return out
	}
	return nil
}

func filter(cands []candidate, prefix string) []candidate {
	var out []candidate
	for _, c := range cands {
		if strings.HasPrefix(c.word, prefix) {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].word < out[j].word })
	return out
}

func withPrefix(prefix string, cands []candidate) []candidate {
	for i := range cands {
		if cands[i].word != filesMarker {
			cands[i].word = prefix + cands[i].word
		}
	}
	return cands
}

// writeCandidates prints candidates as each shell's script reads them: bash takes bare words,
// fish "word<TAB>description", zsh "word:description" with colons in the word escaped (the
// format of _describe).
func writeCandidates(w io.Writer, shell string, cands []candidate) {
	for _, c := range cands {
		desc := strings.Join(strings.Fields(c.desc), " ")
		switch {
		case c.word == filesMarker || shell == "bash":
			fmt.Fprintln(w, c.word)
		case shell == "fish" && desc != "":
			fmt.Fprintf(w, "%s\t%s\n", c.word, desc)
		case shell == "zsh":
			fmt.Fprintf(w, "%s:%s\n", strings.ReplaceAll(c.word, ":", `\:`), desc)
		default:
			fmt.Fprintln(w, c.word)
		}
	}
}

var completionScripts = map[string]string{
	"bash": `# bash completion for statecraft (statecraft completion bash)
_statecraft() {
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${COMP_WORDS[COMP_CWORD]}
    local -a words
    read -r -a words <<< "$line"
    [[ $line =~ [[:space:]]$ ]] && words+=("")
    local full=${words[${#words[@]}-1]}
    local pre=${full%"$cur"}
    local IFS=$'\n'
    local -a out
    out=($("${words[0]}" __complete bash "${words[@]:1}" 2>/dev/null))
    COMPREPLY=()
    if [[ ${#out[@]} -eq 1 && ${out[0]} == __files__ ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    local c
    for c in "${out[@]}"; do
        COMPREPLY+=("${c#"$pre"}")
    done
    [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *[=:] ]] && compopt -o nospace 2>/dev/null
    return 0
}
complete -F _statecraft statecraft
`,
	"zsh": `#compdef statecraft
# zsh completion for statecraft (statecraft completion zsh)
_statecraft() {
    local -a out
    out=("${(@f)$(${words[1]} __complete zsh "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if [[ ${#out[@]} -eq 1 && $out[1] == __files__ ]]; then
        _files
        return
    fi
    out=(${out:#})
    (( ${#out[@]} )) || return 1
    _describe -t values 'statecraft' out
}
if [[ $funcstack[1] == _statecraft ]]; then
    _statecraft "$@"
else
    compdef _statecraft statecraft
fi
`,
	"fish": `# fish completion for statecraft (statecraft completion fish)
function __statecraft_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($words[1] __complete fish $words[2..-1] "$cur" 2>/dev/null)
    if test (count $out) -eq 1 -a "$out[1]" = __files__
        __fish_complete_path "$cur"
        return
    end
    printf '%s\n' $out
end
complete -c statecraft -f -a '(__statecraft_complete)'
`,
}
