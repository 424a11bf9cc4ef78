// Validates custom resources against the JSON schemas that @kubernetes-models
// generates from each operator's Go API types. Reads a JSON array of manifests
// on stdin; prints a JSON array with, per manifest, {kind, name, status, errors}
// where status is "valid", "invalid" or "unknown" (no schema for that kind).
import { Cluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

const MODELS = new Map([
  ["postgresql.cnpg.io/v1/Cluster", Cluster],
  ["monitoring.coreos.com/v1/ServiceMonitor", ServiceMonitor],
  ["monitoring.coreos.com/v1/PrometheusRule", PrometheusRule],
]);

let input = "";
for await (const chunk of process.stdin) input += chunk;

const results = JSON.parse(input).map((manifest) => {
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  const name = manifest.metadata?.name ?? "";
  const Model = MODELS.get(key);
  if (!Model) return { kind: key, name, status: "unknown", errors: [] };
  try {
    new Model(manifest).validate();
    return { kind: key, name, status: "valid", errors: [] };
  } catch (error) {
    const details = (error.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    return { kind: key, name, status: "invalid", errors: details.length ? details : [String(error)] };
  }
});
process.stdout.write(JSON.stringify(results));
