// The two google.rpc details a refusal carries (google/rpc/error_details.proto),
// read straight from the wire: `ErrorInfo` (its reason, domain and metadata)
// and `RetryInfo` (the wait before the same call may be made again). Connect
// hands them over undecoded, as the `Any` values of the status details
// (`grpc-status-details-bin`); @bufbuild/protobuf ships the well-known types
// only, and these two messages need no more than this to read.

import type { ConnectError } from "@connectrpc/connect";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

export const ERROR_INFO = "google.rpc.ErrorInfo";
export const RETRY_INFO = "google.rpc.RetryInfo";

/** google.rpc.ErrorInfo: `reason` = 1, `domain` = 2, `metadata` = 3 (map<string, string>). */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** The raw details of an error read from the wire (type name and bytes). */
function incoming(error: ConnectError, type: string): Uint8Array[] {
  const found: Uint8Array[] = [];
  for (const detail of error.details) {
    if ("type" in detail && detail.type === type) {
      found.push(detail.value);
    }
  }
  return found;
}

export function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.LengthDelimited) {
      info.reason = reader.string();
    } else if (field === 2 && wire === WireType.LengthDelimited) {
      info.domain = reader.string();
    } else if (field === 3 && wire === WireType.LengthDelimited) {
      const [key, value] = decodeEntry(reader.bytes());
      info.metadata[key] = value;
    } else {
      reader.skip(wire, field);
    }
  }
  return info;
}

/** One map entry: key = 1, value = 2. */
function decodeEntry(bytes: Uint8Array): [string, string] {
  const reader = new BinaryReader(bytes);
  let key = "";
  let value = "";
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.LengthDelimited) {
      key = reader.string();
    } else if (field === 2 && wire === WireType.LengthDelimited) {
      value = reader.string();
    } else {
      reader.skip(wire, field);
    }
  }
  return [key, value];
}

/** google.rpc.RetryInfo: `retry_delay` = 1, a google.protobuf.Duration
 * (`seconds` = 1, `nanos` = 2). In milliseconds; undefined without a delay. */
export function decodeRetryDelayMs(bytes: Uint8Array): number | undefined {
  const reader = new BinaryReader(bytes);
  let delay: number | undefined;
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.LengthDelimited) {
      delay = decodeDurationMs(reader.bytes());
    } else {
      reader.skip(wire, field);
    }
  }
  return delay;
}

function decodeDurationMs(bytes: Uint8Array): number {
  const reader = new BinaryReader(bytes);
  let seconds = 0;
  let nanos = 0;
  while (reader.pos < reader.len) {
    const [field, wire] = reader.tag();
    if (field === 1 && wire === WireType.Varint) {
      seconds = Number(reader.int64());
    } else if (field === 2 && wire === WireType.Varint) {
      nanos = reader.int32();
    } else {
      reader.skip(wire, field);
    }
  }
  return seconds * 1000 + nanos / 1_000_000;
}

/** The error's ErrorInfo detail, if it has one. */
export function errorInfoOf(error: ConnectError): ErrorInfo | undefined {
  const [first] = incoming(error, ERROR_INFO);
  return first === undefined ? undefined : decodeErrorInfo(first);
}

/** The wait its RetryInfo detail asks for, if it has one. */
export function retryDelayOf(error: ConnectError): number | undefined {
  const [first] = incoming(error, RETRY_INFO);
  return first === undefined ? undefined : decodeRetryDelayMs(first);
}
