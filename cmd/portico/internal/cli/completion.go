package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// runCompletion prints a shell completion script: the commands, and each
// command's flags, read from the command itself (its --help flag set), so
// the script never drifts from the binary that printed it.
//
//	source <(portico completion bash)
//	portico completion zsh > "${fpath[1]}/_portico"
//	portico completion fish > ~/.config/fish/completions/portico.fish
func runCompletion(_ context.Context, e env, args []string) error {
	fs, _ := newFlags("completion")
	if err := parseFlags(fs, args, 1); err != nil {
		return err
	}
	specs := commandSpecs()
	switch shell := fs.Arg(0); shell {
	case "bash":
		writeBash(e.stdout, specs)
	case "zsh":
		writeZsh(e.stdout, specs)
	case "fish":
		writeFish(e.stdout, specs)
	default:
		return &usageError{fmt.Errorf("shell %q: want bash, zsh or fish", shell)}
	}
	return nil
}

// commandSpec is one command as completion sees it.
type commandSpec struct {
	name, summary string
	flags         []*flag.Flag
}

// commandSpecs asks every command for its flags, as help does.
func commandSpecs() []commandSpec {
	var out []commandSpec
	for _, c := range commands() {
		s := commandSpec{name: c.name, summary: c.summary}
		var h *helpRequest
		if err := c.run(context.Background(), env{io.Discard, io.Discard}, []string{"--help"}); errors.As(err, &h) {
			h.fs.VisitAll(func(f *flag.Flag) { s.flags = append(s.flags, f) })
		}
		out = append(out, s)
	}
	return append(out, commandSpec{name: "help", summary: "list the commands, or show one command's flags"})
}

func names(specs []commandSpec) string {
	var n []string
	for _, s := range specs {
		n = append(n, s.name)
	}
	return strings.Join(n, " ")
}

// writeBash writes a bash completion function: commands first, then the
// named command's flags; other words complete as files.
func writeBash(w io.Writer, specs []commandSpec) {
	fmt.Fprintf(w, "# bash completion for portico; source <(portico completion bash)\n_portico() {\n")
	fmt.Fprintf(w, "  local cur=${COMP_WORDS[COMP_CWORD]}\n")
	fmt.Fprintf(w, "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", names(specs))
	fmt.Fprintf(w, "  local flags\n  case ${COMP_WORDS[1]} in\n")
	for _, s := range specs {
		if s.name == "help" {
			fmt.Fprintf(w, "    help) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", names(specs))
			continue
		}
		var f []string
		for _, fl := range s.flags {
			f = append(f, "--"+fl.Name)
		}
		fmt.Fprintf(w, "    %s) flags=%q ;;\n", s.name, strings.Join(f, " "))
	}
	fmt.Fprintf(w, "  esac\n  if [[ $cur == -* ]]; then\n    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\ncomplete -o filenames -F _portico portico\n")
}

// writeZsh writes a zsh completion function (#compdef): commands with their
// summaries, then the named command's flags with theirs, files otherwise.
func writeZsh(w io.Writer, specs []commandSpec) {
	fmt.Fprintf(w, "#compdef portico\n# zsh completion for portico; portico completion zsh > \"${fpath[1]}/_portico\"\n_portico() {\n")
	fmt.Fprintf(w, "  if (( CURRENT == 2 )); then\n    local -a cmds\n    cmds=(\n")
	for _, s := range specs {
		fmt.Fprintf(w, "      %s\n", zshQuote(s.name+":"+s.summary))
	}
	fmt.Fprintf(w, "    )\n    _describe command cmds\n    return\n  fi\n  case ${words[2]} in\n")
	for _, s := range specs {
		if s.name == "help" {
			continue
		}
		fmt.Fprintf(w, "    %s) _arguments", s.name)
		for _, f := range s.flags {
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, " %s", zshQuote("--"+f.Name+"["+zshBracket(usage)+"]"+zshValue(f)))
		}
		fmt.Fprintf(w, " '*:file:_files' ;;\n")
	}
	fmt.Fprintf(w, "    *) _files ;;\n  esac\n}\n_portico \"$@\"\n")
}

// zshValue is the value part of an _arguments spec: none for a boolean
// flag, a file otherwise.
func zshValue(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	name, _ := flag.UnquoteUsage(f)
	return ":" + strings.ToLower(name) + ":_files"
}

func zshBracket(s string) string {
	s = strings.NewReplacer("[", "(", "]", ")", ":", " ", "\n", " ").Replace(s)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeFish writes fish completions: commands with their summaries, then
// each command's flags with theirs.
func writeFish(w io.Writer, specs []commandSpec) {
	fmt.Fprintf(w, "# fish completion for portico; portico completion fish > ~/.config/fish/completions/portico.fish\n")
	for _, s := range specs {
		fmt.Fprintf(w, "complete -c portico -f -n __fish_use_subcommand -a %s -d %s\n", s.name, zshQuote(s.summary))
	}
	for _, s := range specs {
		for _, f := range s.flags {
			_, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "complete -c portico -n '__fish_seen_subcommand_from %s' -l %s -d %s\n", s.name, f.Name, zshQuote(zshBracket(usage)))
		}
	}
}
