/**
 * Reading the engine's counters and gauges in tests, from an in-process exporter (an engine built
 * with `new EngineMetrics(provider.getMeter(METER_NAME))` over it).
 */
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';

/** A counter's value per `kind/<label>`. */
export async function counterValues(exporter: PrometheusExporter, name: string, label: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const point of await pointsOf(exporter, name)) counts[`${point.attributes.kind}/${point.attributes[label]}`] = point.value as number;
  return counts;
}

/** A counter's value summed over all its labels (0 before it was first added to). */
export async function counterTotal(exporter: PrometheusExporter, name: string): Promise<number> {
  let total = 0;
  for (const point of await pointsOf(exporter, name)) total += point.value as number;
  return total;
}

async function pointsOf(exporter: PrometheusExporter, name: string): Promise<Array<{ attributes: Record<string, unknown>; value: unknown }>> {
  const { resourceMetrics } = await exporter.collect();
  return resourceMetrics.scopeMetrics.flatMap((scope) =>
    scope.metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints as Array<{ attributes: Record<string, unknown>; value: unknown }>),
  );
}

/** A gauge's (or counter's) value per kind, for an instrument whose only label is `kind`. */
export async function valuesByKind(exporter: PrometheusExporter, name: string): Promise<Record<string, number>> {
  const values: Record<string, number> = {};
  for (const point of await pointsOf(exporter, name)) values[String(point.attributes.kind)] = point.value as number;
  return values;
}
