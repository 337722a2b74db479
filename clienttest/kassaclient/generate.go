package kassaclient

// The client is generated from the hub's document; make openapi-client
// refreshes the document snapshot first.
//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../openapi/hub.json
