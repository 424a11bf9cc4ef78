// Waiting for a table: a quick-match queue followed to its match.
//
// Enqueue is a server stream: the ticket, progress now and then, and last the
// match. The matchmaker cancels a ticket whose stream closes, so a wait whose
// stream drops first asks what became of its ticket (GetTicket: matched
// meanwhile, that is the table), then queues again, replacing the ticket if it
// is still live. A player still seated at an unfinished table is sent back to
// it (ALREADY_SEATED names the table).

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type { Calls } from "./calls.js";
import { RummyError } from "./errors.js";
import {
  EnqueueRequestSchema,
  GetTicketRequestSchema,
  MatchmakerService,
  TicketState,
  type Match,
  type QueueProgress,
  type Ticket,
} from "./gen/rummy/v1/matchmaker_pb.js";
import { Backoff, DEFAULT_RETRY, isOutage, isRateLimited, sleep } from "./retries.js";

/** Where the player now sits. */
export interface Seated {
  tableId: string;
  /** The game service serving the table ("host:port"); "" means the address
   * the matchmaker was reached at serves it too. */
  gameTarget: string;
  /** The player's seat, when the match said it (not when sent back to a
   * table they were already seated at: the view's `mySeat` says it). */
  seat: number | undefined;
  /** Sent back to a table the player had not left (ALREADY_SEATED). */
  rejoined: boolean;
}

export type QueueUpdate = { kind: "ticket"; ticket: Ticket } | { kind: "progress"; progress: QueueProgress };

export interface QueueOptions {
  onUpdate?: (update: QueueUpdate) => void;
  /** Aborting it leaves the queue (the stream closes, the ticket is cancelled). */
  signal?: AbortSignal;
}

export type EnqueueInit = MessageInitShape<typeof EnqueueRequestSchema>;

/** How long a ticket whose table is being set up is left to finish. */
const MATCHING_WAIT_MS = 1_000;

export async function queue(
  calls: Calls,
  transport: Transport,
  init: EnqueueInit,
  options: QueueOptions = {},
): Promise<Seated> {
  const retry = { ...DEFAULT_RETRY, ...calls.retry };
  const matchmaker = createClient(MatchmakerService, transport);
  const request = create(EnqueueRequestSchema, init);
  const backoff = new Backoff(retry.firstBackoffMs, retry.maxBackoffMs);
  const signal = options.signal;
  let ticketId = "";
  let lostAt: number | undefined;
  let relogged = false;
  for (;;) {
    const openedWith = calls.session.token;
    let error: RummyError;
    try {
      const stream = matchmaker.enqueue(request, { headers: calls.session.headers(), signal });
      for await (const reply of stream) {
        const update = reply.update;
        if (update.case === "match") {
          return seatedAt(update.value);
        }
        if (update.case === "ticket") {
          ticketId = update.value.ticketId;
          relogged = false;
          if (lostAt !== undefined) {
            lostAt = undefined;
            retry.onConnection?.("back");
          }
          options.onUpdate?.({ kind: "ticket", ticket: update.value });
          const ended = outcome(update.value);
          if (ended !== undefined) {
            return ended;
          }
        } else if (update.case === "progress") {
          options.onUpdate?.({ kind: "progress", progress: update.value });
        }
      }
      throw new ConnectError("the wait for a table ended without a table", Code.Unavailable);
    } catch (thrown) {
      error = RummyError.from(thrown);
    }
    if (signal?.aborted) {
      throw error;
    }
    if (error.reason === "ALREADY_SEATED") {
      return {
        tableId: error.metadata["table_id"] ?? "",
        gameTarget: error.metadata["game_target"] ?? "",
        seat: undefined,
        rejoined: true,
      };
    }
    if (error.code === Code.Unauthenticated) {
      if (relogged) {
        // Refused even fresh: sign in again, but not at once, and not for ever.
        lostAt ??= performance.now();
        if (performance.now() - lostAt > retry.giveUpAfterMs) {
          throw error;
        }
        await sleep(backoff.next(), signal);
      }
      relogged = true;
      await calls.session.signInAgain(openedWith);
    } else if (error.reason === "TICKET_MATCHING") {
      // Too late to replace it: its table is being made. Queueing again a
      // moment later is told the table (ALREADY_SEATED).
      await sleep(MATCHING_WAIT_MS, signal);
    } else if (isRateLimited(error)) {
      await sleep(error.retryAfterMs ?? backoff.next(), signal);
    } else if (isOutage(error)) {
      if (lostAt === undefined) {
        lostAt = performance.now();
        retry.onConnection?.("lost", error);
      } else if (performance.now() - lostAt > retry.giveUpAfterMs) {
        throw error;
      }
      await sleep(backoff.next(), signal);
      if (ticketId !== "") {
        const ticket = await ticketNow(calls, transport, ticketId, signal);
        const ended = ticket.state === TicketState.CANCELLED ? undefined : outcome(ticket);
        if (ended !== undefined) {
          return ended;
        }
      }
    } else {
      throw error;
    }
    request.replaceExisting = true; // a ticket of ours left live is replaced
  }
}

/** The ticket's state now (GetTicket, retried across outages). */
export async function ticketNow(
  calls: Calls,
  transport: Transport,
  ticketId: string,
  signal?: AbortSignal,
): Promise<Ticket> {
  const request = create(GetTicketRequestSchema, { ticketId });
  const reply = await calls.unary(transport, MatchmakerService.method.getTicket, request, signal);
  if (reply.ticket === undefined) {
    throw new Error("GetTicket answered no ticket");
  }
  return reply.ticket;
}

/** A ticket's final state: the table it was matched to, or a refusal for a
 * ticket that ended without one; undefined while it waits. */
function outcome(ticket: Ticket): Seated | undefined {
  if (ticket.state === TicketState.MATCHED && ticket.match !== undefined) {
    return seatedAt(ticket.match);
  }
  if (ticket.state === TicketState.CANCELLED || ticket.state === TicketState.EXPIRED) {
    const why = ticket.endMessage || "The wait for a table ended.";
    const cause = new ConnectError(why, Code.FailedPrecondition);
    throw new RummyError(cause, { reason: "TICKET_ENDED", metadata: { ticket_id: ticket.ticketId } });
  }
  return undefined;
}

function seatedAt(match: Match): Seated {
  return { tableId: match.tableId, gameTarget: match.gameTarget, seat: match.seat, rejoined: false };
}
