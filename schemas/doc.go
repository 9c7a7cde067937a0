// Package schemas holds the CUE definitions of the ldp/v1 objects (#Pipeline, #Workflow),
// embedded in the binary, and Validate, which checks one spec document against them and against
// the rules CUE cannot express (time zones, cron expressions, placeholders, the task graph).
//
// Validate reports every problem of a document at once, each with the data file's
// line:column and the field path. CUE stops reporting some errors once others exist (a missing
// required key, or an unknown key beside a bad value), so Validate runs to a fixpoint: it
// replaces each reported node by top and validates again, until nothing new is found.
package schemas
