// @rummy/client: the Rummy game API for TypeScript apps (Connect-ES).
// Transports: `@rummy/client/node` (gRPC over HTTP/2) and `@rummy/client/web`
// (gRPC-Web, browsers and React Native).

export { RummyClient, type ClientOptions } from "./client.js";
export {
  Session,
  defaultRefreshDelay,
  tokenLifeMs,
  type Credentials,
  type SessionOptions,
} from "./session.js";
export { Table, type MoveOptions, type MoveResult } from "./table.js";
export { TableWatch, type WatchItem } from "./watch.js";
export type { Seated, QueueUpdate, QueueOptions, EnqueueInit } from "./matchmaking.js";
export { ServerClock, TurnCountdown, type Monotonic } from "./countdown.js";
export { Code, DOMAIN, RummyError, type ClientReason } from "./errors.js";
export {
  GAME_REASONS,
  SERVICE_REASONS,
  isKnownReason,
  type GameReason,
  type Reason,
  type ServiceReason,
} from "./reasons.js";
export { READS, repeatableMethods, safeToRepeat, type RetryOptions } from "./retries.js";
export { newRequestId } from "./ids.js";

// The API's messages, enums and service descriptors (generated from proto/).
export * from "./gen/rummy/v1/auth_pb.js";
export * from "./gen/rummy/v1/cards_pb.js";
export * from "./gen/rummy/v1/game_pb.js";
export * from "./gen/rummy/v1/matchmaker_pb.js";
export * from "./gen/rummy/v1/player_pb.js";
export * from "./gen/rummy/v1/table_pb.js";
