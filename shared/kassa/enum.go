package kassa

import "slices"

// Closed sets of values that had no constants of their own.

// Discount types (Discount.Type, campaign rules).
const (
	DiscountPercent = "percent" // Value in basis points: 1000 = 10 %
	DiscountAmount  = "amount"  // Value in minor units
)

// Movement reference types: what caused a stock movement.
const (
	RefOrder      = "order"
	RefRefund     = "refund"
	RefTransfer   = "transfer"
	RefAdjustment = "adjustment"
)

// Conflict kinds sync records (GET /sync/conflicts), beside the money
// invariants' ConflictOverpaid and ConflictOverrefunded (money.go).
const (
	ConflictOversold     = "oversold"
	ConflictOverdrawn    = "overdrawn"
	ConflictCancelLost   = "cancel_lost"
	ConflictClockClamped = "clock_clamped"
	ConflictDuplicateKey = "duplicate_key"
	ConflictQuarantined  = "quarantined"
	// ConflictVoucherOverused: a campaign used past its usage_limit, by
	// orders that stores took offline.
	ConflictVoucherOverused = "voucher_overused"
	// ConflictGiftCardOverdrawn: a gift card's merged balance below zero,
	// redeemed at two stores while they were offline.
	ConflictGiftCardOverdrawn = "gift_card_overdrawn"
	// ConflictStoreCreditOverdrawn: two stores spent a customer's store
	// credit while apart and the merge took it below zero.
	ConflictStoreCreditOverdrawn = "store_credit_overdrawn"
)

// Conflict statuses.
const (
	ConflictOpen     = "open"
	ConflictResolved = "resolved"
)

// Enums are the closed sets of values of the API's string fields, built
// from the constants above and beside each type, so the OpenAPI document
// lists them without retyping. A named string type's set is keyed by its
// type name (Role, Scope, PaymentMethod, PointsType); a plain string field
// names its set with the struct tag openapi:"enum=<key>".
var Enums = map[string][]string{
	"Role":               strs(RoleOwner, RoleManager, RoleCashier, RoleKitchen, RoleOps),
	"Scope":              strs(append(slices.Clone(AllScopes), ScopeKDS, ScopeLocationsWrite, ScopePartnersWrite, ScopeSyncWrite)...),
	"PaymentMethod":      strs(PaymentCash, PaymentCard, PaymentGiftCard, PaymentExternal, PaymentLoyaltyPoints, PaymentStoreCredit),
	"PointsType":         strs(PointsEarn, PointsRedeem, PointsAdjust, PointsRefund),
	"GiftCardTxnType":    strs(GiftCardTxnIssue, GiftCardTxnRedeem, GiftCardTxnRefund, GiftCardTxnAdjust),
	"StoreCreditTxnType": strs(StoreCreditReturn, StoreCreditRedeem, StoreCreditRefund),
	"RefundTo":           {RefundToOriginal, RefundToStoreCredit},
	"GiftCardStatus":     {GiftCardActive, GiftCardDisabled},
	"DrawerStatus":       {DrawerOpen, DrawerClosed},
	"DrawerEntryType":    strs(DrawerFloat, DrawerSale, DrawerRefund, DrawerPaidIn, DrawerPaidOut, DrawerNoSale, DrawerTip, DrawerTipRefund),
	"OrderStatus":        {OrderOpen, OrderCompleted, OrderPartiallyRefunded, OrderRefunded, OrderCancelled},
	"OrderCancel":        {OrderCancelled},
	"Channel":            {ChannelPOS, ChannelOnline, ChannelPartner},
	"KitchenStatus":      {KitchenNew, KitchenInProgress, KitchenReady, KitchenServed},
	"PaymentStatus":      {PaymentPending, PaymentAuthorized, PaymentCaptured, PaymentVoided, PaymentFailed, PaymentRefunded, PaymentPartiallyRefunded},
	"MovementReason":     {ReasonReceived, ReasonCount, ReasonDamaged, ReasonTheft, ReasonWastage, ReasonReturn, ReasonCorrection, ReasonSale, ReasonRefund, ReasonTransferOut, ReasonTransferIn},
	"AdjustReason":       AdjustReasons,
	"RefType":            {RefOrder, RefRefund, RefTransfer, RefAdjustment},
	"TransferStatus":     {TransferInTransit, TransferReceived, TransferCancelled},
	"DiscountType":       {DiscountPercent, DiscountAmount},
	"TicketEventType":    {TicketCreated, TicketUpdated, TicketBumped, TicketRecalled, TicketVoided},
	"ConflictKind":       {ConflictOversold, ConflictOverdrawn, ConflictOverpaid, ConflictOverrefunded, ConflictCancelLost, ConflictClockClamped, ConflictDuplicateKey, ConflictQuarantined, ConflictVoucherOverused, ConflictGiftCardOverdrawn, ConflictStoreCreditOverdrawn},
	"NodeKind":           {NodeEdge, NodeHub},
	"ConflictStatus":     {ConflictOpen, ConflictResolved},
	"ConflictTake":       {TakeEdge, TakeHub},
	"ReceiptKind":        {ReceiptSale, ReceiptRefund},
	"ReceiptJobKind":     {JobPrint, JobEmail},
	"ReceiptJobStatus":   {JobPending, JobDone, JobFailed},
	"PrinterStatus":      {PrinterOK, PrinterUnreachable, PrinterUnknown},
	"GrantType":          {GrantAuthorizationCode, GrantRefreshToken, GrantClientCredentials},
	"ClientType":         {ClientConfidential, ClientPublic},
	"WebhookStatus":      {WebhookActive, WebhookInactive},
	"DeliveryStatus":     {DeliveryPending, DeliveryAwaitingRetry, DeliveryDelivered, DeliveryFailed},
	"TriggerType":        {TriggerEvent, TriggerSchedule, TriggerManual},
	"ConditionOperator":  {OpEq, OpNe, OpGt, OpGte, OpLt, OpLte, OpIn, OpContains, OpExists},
	"ActionType":         {ActionAwardPoints, ActionDeductPoints, ActionTagCustomer, ActionUntagCustomer, ActionSetProductActive, ActionSetCampaignStatus, ActionEmitEvent},
	"ExecutionStatus":    {ExecutionSucceeded, ExecutionFailed, ExecutionSkipped},
	"CampaignType":       {CampaignDiscount, CampaignOffer, CampaignPromotion},
	"CampaignStatus":     {CampaignDraft, CampaignScheduled, CampaignActive, CampaignPaused, CampaignEnded},
	"CampaignStatusSet":  {CampaignActive, CampaignPaused, CampaignEnded},
	"CampaignRuleType":   {RuleOrderDiscount, RuleProductDiscount, RuleCategoryDiscount, RuleBuyXGetY, RuleMinSpend, RulePointsMultiplier},
}

// EnumText describes the sets of Enums that are not named types (those
// are described by their type's doc comment).
var EnumText = map[string]string{
	"OrderStatus":        "An order's state: open, then completed, partially_refunded and refunded; or cancelled from open.",
	"OrderCancel":        "The only status a PATCH may set: cancelled, from open.",
	"Channel":            "Where an order came from.",
	"KitchenStatus":      "Where an order is in the kitchen: new, in_progress, ready, served.",
	"PaymentStatus":      "A payment's state.",
	"GiftCardStatus":     "A gift card's state: active, or disabled (it pays nothing).",
	"DrawerStatus":       "A drawer session's state: open, then closed (with its Z report).",
	"MovementReason":     "Why stock moved: an adjustment's reason code, or sale, refund, transfer_out, transfer_in.",
	"AdjustReason":       "The reason codes of a stock adjustment.",
	"RefType":            "What caused a stock movement.",
	"TransferStatus":     "A transfer's state: in_transit, then received or cancelled.",
	"DiscountType":       "percent (value in basis points) or amount (value in minor units).",
	"TicketEventType":    "The kind of a kitchen display feed event.",
	"ConflictKind":       "The kind of a merge conflict sync recorded.",
	"StoreCreditTxnType": "The kind of a store credit entry: return (credited by a return), redeem (a store_credit payment), refund (a payment given back).",
	"RefundTo":           "Where a return's money goes: original (back through the order's payments) or store_credit (onto the customer's store credit).",
	"NodeKind":           "The kind of a Kassa node.",
	"ConflictStatus":     "Whether a sync conflict still waits for someone to resolve it.",
	"ConflictTake":       "Whose version a quarantined record is resolved by: the store's (edge) or the hub's (hub).",
	"ReceiptKind":        "What a receipt documents: a completed sale or one refund.",
	"ReceiptJobKind":     "A receipt job: a print at a till's printer or an e-mail through the org's relay.",
	"ReceiptJobStatus":   "A receipt job's state: pending (queued or awaiting a retry), done (the printer or relay took it), failed (gave up).",
	"PrinterStatus":      "A receipt printer's state: ok (its last print went through), unreachable (its last print failed), unknown (never tried).",
	"GrantType":          "An OAuth 2.0 grant of the token endpoint.",
	"ClientType":         "An OAuth app's kind (RFC 6749 2.1): confidential (a server holding a client_secret) or public (a native or browser app: no secret, PKCE S256 required).",
	"WebhookStatus":      "A webhook endpoint's state: active endpoints receive events, inactive ones nothing.",
	"DeliveryStatus":     "A webhook delivery's state: pending, awaiting_retry after a failed attempt, then delivered or failed.",
	"TriggerType":        "What sets an automation off: an event of the catalog, a cron schedule, or only POST /automations/trigger (manual).",
	"ConditionOperator":  "How a condition compares the event's field with its value.",
	"ActionType":         "What an automation does: the closed set of docs/automations.md.",
	"ExecutionStatus":    "How an automation's run ended: succeeded, failed (an action failed) or skipped (no match, or the depth limit).",
	"CampaignType":       "How head office files a campaign: discount, offer or promotion.",
	"CampaignStatus":     "A campaign's state: draft, then (launch) scheduled or active, paused, ended.",
	"CampaignStatusSet":  "The statuses a PATCH may ask for: paused, active (resume) or ended.",
	"CampaignRuleType":   "What a campaign rule does: a discount off the order, a product or a category; buy X get Y; a minimum spend condition; a loyalty points multiplier.",
}

// ScopeText says in words what each scope lets an app do (spec part 5's
// table, plus Kassa's own scopes), for the OpenAPI document and the
// consent page.
var ScopeText = map[Scope]string{
	ScopeCatalogRead:      "Read products, categories, modifiers and price lists",
	ScopeCatalogWrite:     "Create and update products, categories, modifiers and price lists",
	ScopeOrdersRead:       "List and retrieve orders and their line items",
	ScopeOrdersWrite:      "Create orders, update their status and initiate refunds",
	ScopeCustomersRead:    "Search and retrieve customer profiles",
	ScopeCustomersWrite:   "Create and update customer records",
	ScopeLoyaltyRead:      "Read loyalty programs, members and point balances",
	ScopeLoyaltyWrite:     "Accrue and redeem loyalty points",
	ScopePaymentsRead:     "Read payment records and payment methods",
	ScopePaymentsWrite:    "Take, capture and void payments",
	ScopeInventoryRead:    "Read stock levels, movements, transfers and alerts",
	ScopeInventoryWrite:   "Adjust stock and create transfers",
	ScopeReportsRead:      "Read sales, inventory and financial reports and sync status",
	ScopeWebhooksWrite:    "Register and manage webhook subscriptions",
	ScopeAutomationsRead:  "Read automation rules and their execution history",
	ScopeAutomationsWrite: "Create and modify automation rules",
	ScopeKDS:              "Show and move kitchen display tickets",
	ScopeLocationsWrite:   "Create locations and enrol their store nodes",
	ScopePartnersWrite:    "Create tenants (orgs with an owner and a first location) as a reseller",
	ScopeSyncWrite:        "Resolve and re-apply sync conflicts at the hub",
}

func strs[T ~string](vs ...T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
