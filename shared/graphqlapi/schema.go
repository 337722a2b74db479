package graphqlapi

// Schema is the catalog's GraphQL schema: the types of spec 2.3 and the
// operations of spec 4.3. Argument types and deleteProduct's result are
// the spec's "not shown", decided here.
const Schema = `
schema {
	query: Query
	mutation: Mutation
}

"The catalog of the org in the caller's token."
type Query {
	"Products, oldest first. orgId, when given, must be the token's org. limit: 1-200, default 50."
	products(orgId: String, categoryId: String, isActive: Boolean, limit: Int): [Product!]!
	"One product; null when the org has none with this id."
	product(id: ID!): Product
	"Every category, by sortOrder then name, each with its products."
	categories(orgId: String): [Category!]!
	"Modifier groups with their options; productId: only the groups offered on that product."
	modifierGroups(orgId: String, productId: String): [ModifierGroup!]!
}

"Catalog changes; they need the catalog:write scope."
type Mutation {
	createProduct(input: CreateProductInput!): Product!
	"Sku and barcodes cannot change."
	updateProduct(id: ID!, input: UpdateProductInput!): Product!
	"A soft delete (REST: archive): the product stays with isActive false, and is returned."
	deleteProduct(id: ID!): Product!
}

"A sellable catalog item."
type Product {
	id: ID!
	orgId: String!
	name: String!
	description: String
	sku: String!
	barcodes: [String!]!
	"In the org currency's major units (4.5 is 4.50)."
	basePrice: Float!
	"What one unit costs the business, in major units; null when not known (set through REST)."
	cost: Float
	isActive: Boolean!
	categoryId: String
	category: Category
	tags: [String!]!
	"RFC 3339, UTC."
	createdAt: String!
	"RFC 3339, UTC."
	updatedAt: String!
	"Its tax category (an id of the org's settings' tax_categories); null: its category's, else the org's rate."
	taxCategoryId: String
	"The product this one is a variant of; null: not a variant."
	variantOf: String
	"A variant's options (size, colour…); empty for a product."
	options: [VariantOption!]!
	"The product's variants, oldest first (made through REST). limit: 1-200, default 50."
	variants(limit: Int): [Product!]!
	"A bundle's components, whose stock it sells; empty: not a bundle (set through REST)."
	components: [BundleComponent!]!
}

"One option of a variant."
type VariantOption {
	name: String!
	value: String!
}

"One product of a bundle and how many units of it one bundle holds."
type BundleComponent {
	productId: String!
	quantity: Int!
}

"A group of products; categories nest through parentId."
type Category {
	id: ID!
	orgId: String!
	name: String!
	description: String
	parentId: String
	sortOrder: Int!
	isActive: Boolean!
	"Its products' tax category when they name none; null: the org's rate."
	taxCategoryId: String
	"The category's products, oldest first. limit: 1-200, default 50."
	products(isActive: Boolean, limit: Int): [Product!]!
}

"Choices offered on products (milk, size)."
type ModifierGroup {
	id: ID!
	name: String!
	required: Boolean!
	minSelections: Int!
	maxSelections: Int!
	options: [ModifierOption!]!
}

"One choice of a modifier group."
type ModifierOption {
	id: ID!
	name: String!
	"In the org currency's major units; may be negative."
	priceAdjustment: Float!
	isDefault: Boolean!
}

input CreateProductInput {
	name: String!
	description: String
	sku: String!
	barcodes: [String!]
	"In the org currency's major units, at most its decimals."
	basePrice: Float!
	categoryId: String
	tags: [String!]
	isActive: Boolean
}

"Only the fields given change; null clears description and categoryId."
input UpdateProductInput {
	name: String
	description: String
	"In the org currency's major units, at most its decimals."
	basePrice: Float
	categoryId: String
	tags: [String!]
	isActive: Boolean
}
`
