package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ldp-dev/ldp/apis/k8s"
	"github.com/ldp-dev/ldp/schemas"
)

// CRDs are the CustomResourceDefinitions of Pipeline and Workflow. Their OpenAPI schema is the
// JSON Schema ldp schema prints (drawn from the CUE that ldp validate checks with), made
// structural as the API server requires: references inlined, a union of object shapes merged
// into one, a union of kinds of value left open. ldp controller still validates each object
// fully, with file:line:col problems, and marks one it refuses Stalled.
func CRDs() ([]apiextv1.CustomResourceDefinition, error) {
	var out []apiextv1.CustomResourceDefinition
	for _, kind := range []string{k8s.KindPipeline, k8s.KindWorkflow} {
		b, err := schemas.JSONSchema(kind)
		if err != nil {
			return nil, err
		}
		var js map[string]any
		if err := json.Unmarshal(b, &js); err != nil {
			return nil, err
		}
		c := &converter{defs: asMap(js["$defs"])}
		props := asMap(js["properties"])
		spec := apiextv1.JSONSchemaProps{Type: "object", Required: []string{"metadata"}, Properties: map[string]apiextv1.JSONSchemaProps{
			"identifier":  withDescription(c.convert(props["identifier"]), "The ldp identifier the idempotency keys are made of; the object's name when not set."),
			"description": c.convert(props["description"]),
			"metadata":    c.convert(props["metadata"]),
			"suspend":     {Type: "boolean", Description: "Stop creating Jobs; running ones finish."},
			"maxConcurrentWindows": {Type: "integer", Format: "int32", Minimum: ptr(0.0),
				Description: "How many of the object's windows run at once (1 when not set)."},
			"timeoutSeconds": {Type: "integer", Format: "int64", Minimum: ptr(0.0),
				Description: "How long a window's Job may run, pod start included (its activeDeadlineSeconds); ldp controller's --job-timeout when not set."},
		}}
		spec.Properties["jobTemplate"] = jobTemplateSchema()
		if kind == k8s.KindPipeline {
			celRules(&spec)
		}
		if kind == k8s.KindWorkflow {
			spec.Properties["tasks"] = c.convert(props["tasks"])
			spec.Required = append(spec.Required, "tasks")
		}
		plural := strings.ToLower(kind) + "s"
		status := statusSchema()
		out = append(out, apiextv1.CustomResourceDefinition{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{Name: plural + "." + k8s.Group},
			Spec: apiextv1.CustomResourceDefinitionSpec{
				Group: k8s.Group,
				Names: apiextv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind),
					ShortNames: []string{map[string]string{k8s.KindPipeline: "ldpp", k8s.KindWorkflow: "ldpw"}[kind]}, Categories: []string{"ldp"}},
				Scope: apiextv1.NamespaceScoped,
				Versions: []apiextv1.CustomResourceDefinitionVersion{{
					Name: k8s.Version, Served: true, Storage: true,
					Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
					AdditionalPrinterColumns: []apiextv1.CustomResourceColumnDefinition{
						{Name: "Schedule", Type: "string", JSONPath: ".spec.metadata.schedule"},
						{Name: "Last window", Type: "string", JSONPath: ".status.lastPublishedWindow"},
						{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
						{Name: "Status", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].message`, Priority: 1},
						{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
					},
					Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
						Type:        "object",
						Description: fmt.Sprintf("An ldp/v1 %s: the body of its spec file in spec, what ldp controller found in status.", kind),
						Required:    []string{"spec"},
						Properties: map[string]apiextv1.JSONSchemaProps{
							"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
							"spec": spec, "status": status,
						},
					}},
				}},
			},
		})
	}
	return out, nil
}

// celRules are the checks of ldp validate that CEL can say, in the CRD, so the API server
// refuses them even with no webhook installed; the webhook (Problems) says the rest.
func celRules(spec *apiextv1.JSONSchemaProps) {
	md := spec.Properties["metadata"]
	tgt := md.Properties["target"]
	tgt.XValidations = append(tgt.XValidations, apiextv1.ValidationRule{
		Rule:    "!has(self.write_mode) || self.write_mode != 'upsert' || has(self.join_cols)",
		Message: "write_mode upsert needs target.join_cols: the columns that identify a row",
	})
	md.Properties["target"] = tgt
	spec.Properties["metadata"] = md
}

// statusSchema is status's, as ldp controller writes it (k8s.Status).
func statusSchema() apiextv1.JSONSchemaProps {
	str := func(d string) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "string", Description: d}
	}
	date := func(d string) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "string", Format: "date-time", Description: d}
	}
	counts := func(d string) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "object", Description: d,
			AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "integer", Format: "int32"}}}
	}
	list := func(d string, item apiextv1.JSONSchemaProps) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "array", Description: d, Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &item}}
	}
	condition := apiextv1.JSONSchemaProps{Type: "object", Required: []string{"type", "status", "lastTransitionTime", "reason", "message"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"type": str("Ready, Reconciling or Stalled."), "status": {Type: "string", Enum: []apiextv1.JSON{{Raw: []byte(`"True"`)}, {Raw: []byte(`"False"`)}, {Raw: []byte(`"Unknown"`)}}},
			"observedGeneration": {Type: "integer", Format: "int64"}, "lastTransitionTime": date(""),
			"reason": str("Why, in one CamelCase word (docs/kubernetes.md lists each and what to do)."), "message": str("Why, in words."),
		}}
	attempt := apiextv1.JSONSchemaProps{Type: "object", Required: []string{"window", "attempt", "outcome"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"window":        str("START/END in UTC."),
			"attempt":       {Type: "integer", Format: "int32", Description: "The number of the window's last attempt."},
			"outcome":       {Type: "string", Description: "The last attempt's.", Enum: []apiextv1.JSON{{Raw: []byte(`"running"`)}, {Raw: []byte(`"failed"`)}, {Raw: []byte(`"blocked"`)}}},
			"job":           str("The last attempt's Job (deleted after ldp controller's --job-ttl)."),
			"started":       date("When the last attempt's Job was created."),
			"finished":      date("When the last attempt finished."),
			"nextAttemptAt": date("When the next attempt may start; none when the window's attempts are spent."),
			"retry":         str("The ldp.dev/retry annotation the attempts were counted under."),
			"firstAttempt":  {Type: "integer", Format: "int32", Description: "The first attempt counted against the retries' max_attempts."},
		}}
	return apiextv1.JSONSchemaProps{Type: "object", Description: "What ldp controller found at its last reconcile.",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"observedGeneration":  {Type: "integer", Format: "int64", Description: "The generation of the spec the status is of."},
			"conditions":          list("Ready, Reconciling and Stalled, as Flux writes them.", condition),
			"lastPublishedWindow": str("The latest window that is done, START/END in UTC."),
			"windows":             counts("The desired windows by state (published, failed, blocked, partial, missing, running)."),
			"missed":              list("Windows before the latest that catch-up would have run (catchup off).", apiextv1.JSONSchemaProps{Type: "string"}),
			"backfill":            str("The command that fills the missed windows."),
			"nextFire":            date("The schedule's next fire."),
			"attempts":            list(fmt.Sprintf("The windows that are not published, each with its last attempt, its outcome and when the next may start; at most %d, the newest first.", k8s.MaxRememberedWindows), attempt),
			"forgottenWindows":    counts("The windows dropped from attempts past its bound, by the outcome of their last attempt."),
		}}
}

// jobTemplateSchema is spec.jobTemplate's: the fields of a pod spec it takes, each checked
// by the API server when it creates the Job (a pod spec's own schema is Kubernetes', not
// repeated here).
func jobTemplateSchema() apiextv1.JSONSchemaProps {
	strings := apiextv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string"}}}
	object := func(d string) apiextv1.JSONSchemaProps { o := open(); o.Type, o.Description = "object", d; return o }
	list := func(d string) apiextv1.JSONSchemaProps {
		item := object("")
		return apiextv1.JSONSchemaProps{Type: "array", Description: d, Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &item}}
	}
	return apiextv1.JSONSchemaProps{Type: "object",
		Description: "The pod settings of the object's Jobs, in a pod spec's fields (the image is ldp controller's --image). A securityContext given replaces ldp's default: non-root, a read-only root file system, no privilege escalation, no capability.",
		Properties: map[string]apiextv1.JSONSchemaProps{
			"labels": withDescription(strings, "Added to the pods' labels."), "annotations": withDescription(strings, "The pods' annotations."),
			"serviceAccountName":       {Type: "string", Description: "The pods' service account (ldp controller's --job-service-account when not set)."},
			"nodeSelector":             withDescription(strings, "The pods' nodeSelector."),
			"tolerations":              list("The pods' tolerations."),
			"affinity":                 object("The pods' affinity."),
			"resources":                object("The ldp container's resources (requests, limits)."),
			"securityContext":          object("The pod's securityContext."),
			"containerSecurityContext": object("The ldp container's securityContext."),
			"env":                      list("Added to the ldp container's environment."),
			"volumes":                  list("Added to the pods' volumes."),
			"volumeMounts":             list("Added to the ldp container's volume mounts."),
		}}
}

func ptr[T any](v T) *T { return &v }

func withDescription(s apiextv1.JSONSchemaProps, d string) apiextv1.JSONSchemaProps {
	s.Description = d
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// converter makes JSON Schema (2020-12, as CUE exports it) into a structural OpenAPI v3
// schema.
type converter struct {
	defs  map[string]any
	depth int
}

// open is a value the schema cannot type: anything, left to ldp's own validation.
func open() apiextv1.JSONSchemaProps {
	preserve := true
	return apiextv1.JSONSchemaProps{XPreserveUnknownFields: &preserve}
}

func (c *converter) convert(v any) apiextv1.JSONSchemaProps {
	s := asMap(v)
	if s == nil {
		return open()
	}
	if ref, ok := s["$ref"].(string); ok {
		c.depth++
		defer func() { c.depth-- }()
		if c.depth > 20 {
			return open()
		}
		out := c.convert(c.defs[strings.TrimPrefix(ref, "#/$defs/")])
		if d, ok := description(s); ok {
			out.Description = d
		}
		return out
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if branches, ok := s[k].([]any); ok {
			out := c.union(k, branches)
			if d, ok := description(s); ok {
				out.Description = d
			}
			if t, ok := s["type"].(string); ok && out.Type == "" && out.XPreserveUnknownFields == nil {
				out.Type = t
			}
			return out
		}
	}
	var out apiextv1.JSONSchemaProps
	out.Description, _ = description(s)
	switch t := s["type"].(type) {
	case string:
		out.Type = t
	case []any:
		return withDescription(open(), out.Description) // several kinds of value
	}
	if cv, ok := s["const"]; ok {
		b, _ := json.Marshal(cv)
		out.Enum = []apiextv1.JSON{{Raw: b}}
		if out.Type == "" {
			out.Type = jsonType(cv)
		}
	}
	if e, ok := s["enum"].([]any); ok {
		for _, v := range e {
			b, _ := json.Marshal(v)
			out.Enum = append(out.Enum, apiextv1.JSON{Raw: b})
		}
		if out.Type == "" && len(e) > 0 {
			out.Type = jsonType(e[0])
			for _, v := range e[1:] {
				if jsonType(v) != out.Type {
					return withDescription(open(), out.Description)
				}
			}
		}
	}
	out.Pattern, _ = s["pattern"].(string)
	if n, ok := s["minimum"].(float64); ok {
		out.Minimum = &n
	}
	if n, ok := s["maximum"].(float64); ok {
		out.Maximum = &n
	}
	if n, ok := s["exclusiveMinimum"].(float64); ok {
		out.Minimum, out.ExclusiveMinimum = &n, true
	}
	if n, ok := s["exclusiveMaximum"].(float64); ok {
		out.Maximum, out.ExclusiveMaximum = &n, true
	}
	if n, ok := s["minLength"].(float64); ok {
		i := int64(n)
		out.MinLength = &i
	}
	// CUE's #NonEmpty (string & !="") exports as not: {const: ""}; OpenAPI says it so.
	if not := asMap(s["not"]); out.Type == "string" && not != nil && not["const"] == "" && out.MinLength == nil {
		out.MinLength = ptr(int64(1))
	}
	if n, ok := s["maxLength"].(float64); ok {
		i := int64(n)
		out.MaxLength = &i
	}
	if n, ok := s["minItems"].(float64); ok {
		i := int64(n)
		out.MinItems = &i
	}
	if props := asMap(s["properties"]); props != nil {
		if out.Type == "" {
			out.Type = "object"
		}
		out.Properties = map[string]apiextv1.JSONSchemaProps{}
		for _, k := range slices.Sorted(maps.Keys(props)) {
			out.Properties[k] = c.convert(props[k])
		}
		if r, ok := s["required"].([]any); ok {
			for _, k := range r {
				out.Required = append(out.Required, k.(string))
			}
		}
	} else if ap := asMap(s["additionalProperties"]); ap != nil {
		item := c.convert(ap)
		out.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &item}
		if out.Type == "" {
			out.Type = "object"
		}
	}
	if items, ok := s["items"]; ok {
		item := c.convert(items)
		out.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &item}
		out.Type = "array"
	}
	if out.Type == "" {
		return withDescription(open(), out.Description)
	}
	if out.Type == "object" && out.Properties == nil && out.AdditionalProperties == nil {
		preserve := true
		out.XPreserveUnknownFields = &preserve
	}
	return out
}

// union is anyOf, oneOf or allOf made structural: branches of one kind of value merge (an
// object's properties are the union of its branches', required only where all agree); an
// allOf of constraints on one value keeps the first branch's; branches of several kinds of
// value are left open.
func (c *converter) union(op string, branches []any) apiextv1.JSONSchemaProps {
	var conv []apiextv1.JSONSchemaProps
	for _, b := range branches {
		conv = append(conv, c.convert(b))
	}
	t := ""
	for _, s := range conv {
		if s.XPreserveUnknownFields != nil && s.Type == "" {
			return open()
		}
		if t == "" {
			t = s.Type
		} else if s.Type != t && !(isNumber(t) && isNumber(s.Type)) {
			return open()
		}
	}
	if isNumber(t) {
		for _, s := range conv {
			if s.Type == "number" {
				t = "number"
			}
		}
	}
	if t != "object" {
		out := apiextv1.JSONSchemaProps{Type: t}
		if op == "allOf" {
			out = conv[0]
			out.Type = t
		}
		var enum []apiextv1.JSON
		all := true
		for _, s := range conv {
			if len(s.Enum) == 0 {
				all = false
			}
			enum = append(enum, s.Enum...)
		}
		if all && op != "allOf" {
			out.Enum = enum
		}
		// CUE's default, *"append" | #WriteMode, exports as anyOf [const, the constraint]:
		// the constraint admits the default, so it is the schema.
		if op != "allOf" && !all {
			var open []apiextv1.JSONSchemaProps
			for _, s := range conv {
				if len(s.Enum) == 0 {
					open = append(open, s)
				}
			}
			if len(open) == 1 {
				out = open[0]
				out.Type = t
			}
		}
		if t == "array" {
			out.Items = conv[0].Items
		}
		return out
	}
	out := apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{}}
	required := map[string]int{}
	for _, s := range conv {
		for k, p := range s.Properties {
			if prev, ok := out.Properties[k]; ok {
				switch {
				case prev.Type != p.Type:
					p = open()
				case len(prev.Enum) > 0 && len(p.Enum) > 0:
					p.Enum = append(slices.Clone(prev.Enum), p.Enum...)
				default:
					p.Enum = nil // one branch takes any value
				}
			}
			out.Properties[k] = p
		}
		for _, r := range s.Required {
			required[r]++
		}
		if s.AdditionalProperties != nil && len(s.Properties) == 0 {
			return s
		}
	}
	for _, k := range slices.Sorted(maps.Keys(required)) {
		if required[k] == len(conv) || op == "allOf" {
			out.Required = append(out.Required, k)
		}
	}
	return out
}

// definitionDoc is the start of a CUE definition's doc comment ("#NonEmpty is a string ...").
var definitionDoc = regexp.MustCompile(`^#[A-Za-z0-9_]+\s+(is\s+)?`)

// description is a schema node's description as a CRD shows it: a CUE definition's doc comment
// names the definition, an internal name kubectl explain must not show, so the name goes
// ("#NonEmpty is a string with ..." reads "A string with ...").
func description(s map[string]any) (string, bool) {
	d, ok := s["description"].(string)
	if !ok {
		return "", false
	}
	if loc := definitionDoc.FindStringIndex(d); loc != nil {
		d = d[loc[1]:]
		if d != "" {
			d = strings.ToUpper(d[:1]) + d[1:]
		}
	}
	return d, true
}

func isNumber(t string) bool { return t == "number" || t == "integer" }

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return ""
}
