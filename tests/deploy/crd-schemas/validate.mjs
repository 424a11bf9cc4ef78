// Validates custom resources against the JSON schemas of their operators.
// Reads a JSON array of manifests on stdin; prints a JSON array with, per
// manifest, {kind, name, status, errors} where status is "valid", "invalid" or
// "unknown" (no schema for that kind).
//
// Two sources of schemas:
// - the ones @kubernetes-models generates from each project's Go API types
//   (CloudNativePG, the Prometheus operator, Gateway API); they allow unknown
//   fields;
// - the parts of Envoy Gateway's CRDs this project uses, vendored in vendored/
//   (scripts/vendor_crd_schema.py, which says how); checked as the API
//   server's strict field validation would, so an unknown field is an error.
import { readdirSync, readFileSync } from "node:fs";

import { Cluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster";
import { Gateway } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway";
import { GRPCRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";
import Ajv from "ajv";

const MODELS = new Map([
  ["postgresql.cnpg.io/v1/Cluster", Cluster],
  ["monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor],
  ["monitoring.coreos.com/v1/PrometheusRule", PrometheusRule],
  ["gateway.networking.k8s.io/v1/Gateway", Gateway],
  ["gateway.networking.k8s.io/v1/GRPCRoute", GRPCRoute],
]);

// Structural schemas prune unknown fields, and the API server refuses them
// (kubectl's default field validation is Strict): close every object that
// lists its properties, unless it keeps unknown fields on purpose.
function closed(schema) {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const result = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]));
  if (
    result.properties &&
    !("additionalProperties" in result) &&
    !result["x-kubernetes-preserve-unknown-fields"]
  ) {
    result.additionalProperties = false;
  }
  return result;
}

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat("int32", { type: "number", validate: (n) => Number.isInteger(n) && Math.abs(n) < 2 ** 31 });
ajv.addFormat("int64", { type: "number", validate: (n) => Number.isInteger(n) });
const vendored = new URL("./vendored/", import.meta.url);
const VENDORED = new Map(
  readdirSync(vendored)
    .filter((name) => name.endsWith(".json"))
    .map((name) => {
      const file = JSON.parse(readFileSync(new URL(name, vendored), "utf8"));
      return [`${file.group}/${file.version}/${file.kind}`, ajv.compile(closed(file.schema))];
    }),
);

function check(key, manifest) {
  const Model = MODELS.get(key);
  if (Model) {
    try {
      new Model(manifest).validate();
      return [];
    } catch (error) {
      const details = (error.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
      return details.length ? details : [String(error)];
    }
  }
  const validate = VENDORED.get(key);
  if (validate(manifest)) return [];
  return validate.errors.map((e) => {
    const extra = e.params?.additionalProperty;
    return `${e.instancePath} ${e.message}${extra ? `: ${extra}` : ""}`;
  });
}

let input = "";
for await (const chunk of process.stdin) input += chunk;

const results = JSON.parse(input).map((manifest) => {
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  const name = manifest.metadata?.name ?? "";
  if (!MODELS.has(key) && !VENDORED.has(key)) return { kind: key, name, status: "unknown", errors: [] };
  const errors = check(key, manifest);
  return { kind: key, name, status: errors.length ? "invalid" : "valid", errors };
});
process.stdout.write(JSON.stringify(results));
