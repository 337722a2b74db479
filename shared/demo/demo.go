// Package demo seeds a node with the demo org "Demo Coffee": one location,
// four staff users and a small café catalog. It runs only when a node is
// started with --demo, and does nothing when the org exists already.
package demo

import (
	"context"

	"fmt"
	"io"

	"kassa.dev/shared/kassa"
	"kassa.dev/shared/node"
)

// Password is the password of every demo user.
const Password = "kassa-demo"

// Users are the demo logins and their roles.
var Users = []struct {
	Email string
	Role  kassa.Role
}{
	{"owner@demo.test", kassa.RoleOwner},
	{"manager@demo.test", kassa.RoleManager},
	{"cashier@demo.test", kassa.RoleCashier},
	{"kitchen@demo.test", kassa.RoleKitchen},
}

// OrgName is the demo org's name.
const OrgName = "Demo Coffee"

type item struct {
	name, sku, category string
	price               int64
	milk                bool
}

var catalog = []item{
	{"Flat White", "COF-FW", "Coffee", 480, true},
	{"Latte", "COF-LAT", "Coffee", 480, true},
	{"Cappuccino", "COF-CAP", "Coffee", 480, true},
	{"Long Black", "COF-LB", "Coffee", 420, false},
	{"Espresso", "COF-ESP", "Coffee", 380, false},
	{"Mocha", "COF-MOC", "Coffee", 520, true},
	{"Chai Latte", "TEA-CHAI", "Tea", 500, true},
	{"English Breakfast Tea", "TEA-EB", "Tea", 420, false},
	{"Iced Latte", "COLD-IL", "Cold Drinks", 550, true},
	{"Orange Juice", "COLD-OJ", "Cold Drinks", 600, false},
	{"Croissant", "BAK-CRO", "Bakery", 450, false},
	{"Banana Bread", "BAK-BB", "Bakery", 550, false},
	{"Blueberry Muffin", "BAK-MUF", "Bakery", 500, false},
	{"Ham & Cheese Toastie", "FOOD-HCT", "Food", 1250, false},
	{"Avocado Toast", "FOOD-AVO", "Food", 1650, false},
}

// Seed creates the demo org on n unless it exists, and returns its id.
func Seed(ctx context.Context, n *node.Node) (string, error) {
	if org, err := n.Orgs.FindOrgByName(ctx, OrgName); err == nil {
		return org.ID, nil
	} else if kassa.ErrorKind(err) != kassa.ENotFound {
		return "", err
	}
	org, owner, err := n.Orgs.CreateOrg(ctx, &kassa.OrgCreate{
		Name: OrgName, Currency: "AUD", OwnerEmail: Users[0].Email, OwnerName: "Olivia Owner", OwnerPassword: Password,
	})
	if err != nil {
		return "", fmt.Errorf("demo: org: %w", err)
	}
	ctx = node.Actor(ctx, owner)
	s := n.Services
	loc, err := s.Locations.CreateLocation(ctx, &kassa.LocationCreate{
		Name: "Demo Coffee Surry Hills", Timezone: "Australia/Sydney", Address: "1 Crown St, Surry Hills NSW 2010",
	})
	if err != nil {
		return "", fmt.Errorf("demo: location: %w", err)
	}
	for _, u := range Users[1:] {
		if _, err := s.Users.CreateUser(ctx, &kassa.UserCreate{Email: u.Email, Name: string(u.Role), Role: u.Role, Password: Password}); err != nil {
			return "", fmt.Errorf("demo: user %s: %w", u.Email, err)
		}
	}
	// A register, so the demo's till page can be set up and open its
	// drawer at once (docs/till.md).
	if _, err := s.Registers.CreateRegister(ctx, &kassa.RegisterCreate{LocationID: loc.ID, Name: "Front counter"}); err != nil {
		return "", fmt.Errorf("demo: register: %w", err)
	}
	milk, err := s.ModifierGroups.CreateModifierGroup(ctx, &kassa.ModifierGroupCreate{
		Name: "Milk", Required: false, MinSelections: 0, MaxSelections: ptr(1),
		Options: []kassa.ModifierOptionInput{
			{Name: "Full cream", IsDefault: true}, {Name: "Skim"}, {Name: "Oat", PriceAdjustment: 70},
			{Name: "Almond", PriceAdjustment: 70}, {Name: "Soy", PriceAdjustment: 60},
		},
	})
	if err != nil {
		return "", fmt.Errorf("demo: milk: %w", err)
	}
	categories := map[string]string{}
	for i, name := range []string{"Coffee", "Tea", "Cold Drinks", "Bakery", "Food"} {
		c, err := s.Categories.CreateCategory(ctx, &kassa.CategoryCreate{Name: name, SortOrder: i})
		if err != nil {
			return "", fmt.Errorf("demo: category %s: %w", name, err)
		}
		categories[name] = c.ID
	}
	for _, it := range catalog {
		in := &kassa.ProductCreate{Name: it.name, SKU: it.sku, BasePrice: ptr(it.price), CategoryID: ptr(categories[it.category])}
		if it.milk {
			in.ModifierGroupIDs = []string{milk.ID}
		}
		p, err := s.Products.CreateProduct(ctx, in)
		if err != nil {
			return "", fmt.Errorf("demo: product %s: %w", it.sku, err)
		}
		if _, err := s.Inventory.Adjust(ctx, &kassa.StockAdjust{LocationID: loc.ID, ProductID: p.ID,
			Reason: kassa.ReasonReceived, Quantity: 200, ReorderPoint: ptr(int64(20)), Note: "opening stock"}); err != nil {
			return "", fmt.Errorf("demo: stock %s: %w", it.sku, err)
		}
	}
	return org.ID, nil
}

// PrintLogins writes the demo logins to out.
func PrintLogins(out io.Writer) {
	fmt.Fprintf(out, "demo org %q: log in with password %q as", OrgName, Password)
	for _, u := range Users {
		fmt.Fprintf(out, " %s", u.Email)
	}
	fmt.Fprintln(out)
}

func ptr[T any](v T) *T { return &v }

// OwnerAndLocation returns the demo org's owner and its location.
func OwnerAndLocation(ctx context.Context, n *node.Node, orgID string) (*kassa.User, string, error) {
	owner, err := n.UserByEmail(ctx, Users[0].Email)
	if err != nil {
		return nil, "", err
	}
	l, err := n.Services.Locations.FindLocations(node.Actor(ctx, owner), kassa.Page{Limit: 1})
	if err != nil || len(l.Items) == 0 {
		return nil, "", fmt.Errorf("demo: no location: %v", err)
	}
	return owner, l.Items[0].ID, nil
}
