// Package schemaform turns the JSON Schema of an action's input into an
// HTML run form for the console, and the posted form back into the JSON
// input.
//
// The flow for one run form:
//
//	catalog input schema ──Render──▶ <fieldset> of labelled fields + raw JSON pane
//	        ▲                               │ browser posts url.Values
//	        │                               ▼ (names are JSON pointers: "/items/0/qty")
//	422 details (pointer → message) ◀── Parse ──▶ JSON input ──▶ catalog.EnqueueAction
//
// Field names are the JSON pointers of the values they hold, so the
// pointers of a 422 body ("/items/2/qty") land next to the field that
// holds that value without any mapping. Render supports the schema shapes
// a form can express (objects with properties, arrays with one items
// schema, strings, numbers, integers, booleans, enums, local $ref); for
// anything else it returns an *UnsupportedError and the console offers
// the raw JSON editor instead.
//
// Parse does not validate against the schema: it only converts each
// field to the JSON type the schema names. The one enqueue path validates
// the result, so the console and the API refuse the same inputs with the
// same pointers.
//
// console/static/schemaform.js adds array rows, inline client-side
// checks and the raw JSON toggle; without it the form still works (native
// constraint validation, no row adding).
package schemaform
