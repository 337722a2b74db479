package httpapi

import (
	"embed"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"reflect"
	"strconv"
	"strings"

	"kassa.dev/shared/kassa"
)

// The descriptions of the OpenAPI document are the doc comments of the
// types and fields themselves (kassa's and this package's), read from the
// embedded source when the document is first built: one place for the
// code and what the document says of it.

// The package's Go files, its tests left out (embed has no exclusion:
// these patterns match every name that does not end in _test.go and has a
// file today; TestTheEmbeddedSourceIsEveryNonTestFile fails when a new
// file needs another pattern, e.g. *[^t]est.go for a request.go).
//
//go:embed *[^t].go *[^s]t.go *[^e]st.go
var source embed.FS

// docIndex holds doc text by "Type" and "Type.json_name".
type docIndex struct{ m map[string]string }

func sourceDocs(groups []Group) *docIndex {
	d := &docIndex{m: map[string]string{}}
	d.add(kassa.Source)
	d.add(source)
	for _, g := range groups {
		if g.Source != nil {
			d.add(g.Source)
		}
	}
	return d
}

func (d *docIndex) add(fsys fs.FS) {
	files, _ := fs.Glob(fsys, "*.go")
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			continue
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				d.m[ts.Name.Name] = text(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					t := text(fld.Doc)
					if t == "" {
						t = text(fld.Comment)
					}
					for _, n := range fld.Names {
						d.m[ts.Name.Name+"."+jsonName(fld, n.Name)] = t
					}
				}
			}
		}
	}
}

func jsonName(f *ast.Field, goName string) string {
	if f.Tag == nil {
		return goName
	}
	tag, _ := strconv.Unquote(f.Tag.Value)
	name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
	if name == "" {
		return goName
	}
	return name
}

// text is a comment group as one line.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

// typeDoc is the description of a type: its doc comment without the
// leading "Name is" of Go's convention ("Order is a sale" → "A sale").
func (d *docIndex) typeDoc(typ string) string {
	t := d.m[typ]
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(t, typ+verb); ok && rest != "" {
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	return t
}

// fieldDoc is the description of field json of type typ: its own doc
// comment; else that of the same field of the resource typ creates or
// updates (ProductCreate.name → Product.name); else the meaning the field
// name has everywhere (commonDocs).
func (d *docIndex) fieldDoc(typ, json string) string {
	if t := d.m[typ+"."+json]; t != "" {
		return t
	}
	if base, ok := docBase[typ]; ok {
		return d.fieldDoc(base, json)
	}
	for _, suffix := range []string{"Create", "Update", "Input", "Request"} {
		if base, ok := strings.CutSuffix(typ, suffix); ok {
			if t := d.fieldDoc(base, json); t != "" {
				return t
			}
		}
	}
	return commonDocs[json]
}

// docBase names the resource of a body whose name does not end in
// Create, Update, Input or Request.
var docBase = map[string]string{"SettingsUpdate": "OrgSettings", "TicketMove": "Ticket", "PointsRequest": "PointsTransaction"}

// commonDocs are the meanings field names have in every resource.
var commonDocs = map[string]string{
	"id":                 "The id (UUIDv7).",
	"org_id":             "The org that owns it.",
	"created_at":         "When it was created (RFC 3339, UTC).",
	"updated_at":         "When it last changed (RFC 3339, UTC).",
	"name":               "The display name.",
	"description":        "Free text shown to staff.",
	"notes":              "Free-text notes.",
	"is_active":          "Whether it is in use; inactive ones are kept but not offered.",
	"location_id":        "The location (store) it belongs to.",
	"product_id":         "The product.",
	"customer_id":        "The customer, if any.",
	"order_id":           "The order.",
	"category_id":        "The category.",
	"program_id":         "The loyalty program.",
	"account_id":         "The loyalty account.",
	"currency":           "ISO 4217 code of the org's currency.",
	"amount":             "An amount in minor units of the currency.",
	"quantity":           "A number of units.",
	"tags":               "Free labels for search and grouping.",
	"sku":                "The stock-keeping unit, unique per org.",
	"actor":              "The user or app that did it; null for the system.",
	"origin":             "The node (edge or hub) where it happened.",
	"location_ids":       "The locations it applies at; empty means every location.",
	"product_ids":        "The products it applies to.",
	"station":            "The kitchen station its lines go to (e.g. kitchen, bar).",
	"price_adjustment":   "Added to the line's unit price, in minor units (may be negative).",
	"line_items":         "The lines.",
	"lines":              "The lines.",
	"discount":           "A manual discount.",
	"email":              "An e-mail address.",
	"phone":              "A phone number.",
	"timezone":           "IANA time zone name, e.g. Australia/Sydney.",
	"address":            "Postal address.",
	"restock":            "Whether the refunded units return to stock.",
	"processor_ref":      "The payment processor's reference.",
	"kitchen_status":     "Where the order is in the kitchen.",
	"channel":            "Where the order came from.",
	"points":             "A number of loyalty points.",
	"modifier_group_ids": "The modifier groups offered on it.",
	"sort_order":         "Position among its siblings, lowest first.",
	"parent_id":          "The parent category; null at the top.",
}
