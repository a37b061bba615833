/**
 * Metrics as CloudWatch embedded-metric-format (EMF) log lines, for Lambda: CloudWatch turns
 * each line into metric values without an agent, a collector or a PutMetricData call.
 *
 * Delta temporality (each line carries what happened since the last one: CloudWatch sums
 * lines). Tenant, project, process and tool stay properties of the line, searchable in Logs
 * Insights, not dimensions: as dimensions each combination would be a custom metric of its own.
 * Histograms become their mean and maximum per line (EMF has no buckets); percentiles need OTLP.
 */
import type { Attributes } from "@opentelemetry/api";
import { type ExportResult, ExportResultCode } from "@opentelemetry/core";
import {
  AggregationTemporality,
  DataPointType,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";

/** The CloudWatch namespace the metrics appear under. */
export const EMF_NAMESPACE = "VanceServerTools";

const PROPERTIES_ONLY = new Set(["vance.tenant", "vance.project", "vance.process", "vance.tool"]);

/** One EMF line per metric data point, written with `write` (stdout in Lambda). */
export class EmfMetricExporter implements PushMetricExporter {
  constructor(private readonly write: (line: string) => void = (line) => console.log(line)) {}

  export(metrics: ResourceMetrics, done: (result: ExportResult) => void): void {
    const timestamp = Date.now();
    for (const scope of metrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        const unit = metric.descriptor.unit === "ms" ? "Milliseconds" : "Count";
        for (const point of metric.dataPoints) {
          const values: Record<string, number> =
            metric.dataPointType === DataPointType.HISTOGRAM
              ? histogramValues(
                  metric.descriptor.name,
                  point.value as { sum?: number; count: number; max?: number },
                )
              : { [metric.descriptor.name]: Number(point.value) };
          if (metric.dataPointType !== DataPointType.HISTOGRAM && values[metric.descriptor.name] === 0)
            continue;
          this.write(emfLine(timestamp, point.attributes, values, unit));
        }
      }
    }
    done({ code: ExportResultCode.SUCCESS });
  }

  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.DELTA;
  }

  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function histogramValues(name: string, value: { sum?: number; count: number; max?: number }) {
  if (value.count === 0) return {};
  return {
    [name]: (value.sum ?? 0) / value.count,
    [`${name}.max`]: value.max ?? 0,
    [`${name}.count`]: value.count,
  };
}

function emfLine(
  timestamp: number,
  attributes: Attributes,
  values: Record<string, number>,
  unit: string,
): string {
  const dimensions = Object.keys(attributes).filter((key) => !PROPERTIES_ONLY.has(key));
  const names = Object.keys(values);
  return JSON.stringify({
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: EMF_NAMESPACE,
          Dimensions: [dimensions],
          Metrics: names.map((name) => ({ Name: name, Unit: name.endsWith(".count") ? "Count" : unit })),
        },
      ],
    },
    ...Object.fromEntries(Object.entries(attributes).map(([key, value]) => [key, String(value)])),
    ...values,
  });
}
