// Package envflag lets every command-line flag also be set from the
// environment: flag "http-addr" reads KASSA_HTTP_ADDR. A flag given on the
// command line wins over the environment. Only main packages call Parse.
package envflag

import (
	"flag"
	"fmt"
	"strings"
)

// EnvName returns the environment variable of a flag name.
func EnvName(prefix, flagName string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Parse parses args into fs, then fills every flag not given on the command
// line from getenv(prefix + NAME).
func Parse(fs *flag.FlagSet, args []string, prefix string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v := getenv(EnvName(prefix, f.Name)); v != "" {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", EnvName(prefix, f.Name), serr)
			}
		}
	})
	return err
}
