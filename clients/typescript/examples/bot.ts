// A bot that signs in, queues for a quick match (bots fill the other seats)
// and plays the whole game through the SDK: on each of its turns it draws
// from the stock, lays down the melds the server's hint says it can, and
// discards its costliest card. It follows the table's Watch stream, resumed
// by the SDK after any disconnect, and shows the turn's countdown.
//
//   npm run build && node dist/examples/bot.js --server http://127.0.0.1:50052
//
// `make run` serves the matchmaker on 50052; the match names the game service.

import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import {
  EventKind,
  Phase,
  RummyClient,
  RummyError,
  TurnCountdown,
  type Card,
  type EnqueueInit,
  type Table,
  type TableEvent,
  type TableView,
  type TableWatch,
} from "../src/index.js";
import { nodeTransport, targetUrl } from "../src/node.js";

/** What one game looked like from the bot's seat. */
export interface GameRecord {
  table: Table;
  /** The view the bot started from (its `lastSeq`: where its Watch began). */
  first: TableView;
  /** Every event the Watch delivered, in order. */
  events: TableEvent[];
  /** The view once the game was over. */
  last: TableView;
  /** Turns the bot played. */
  turns: number;
  /** Moves the server refused (none, for a bot that only plays legal moves). */
  refused: RummyError[];
  /** The Watch the bot followed the table with (`reconnects`...). */
  watch: TableWatch;
}

export interface BotHooks {
  /** After each of the bot's turns (a test may break the connection here). */
  afterTurn?: (turn: number, view: TableView, table: Table) => Promise<void>;
  log?: (line: string) => void;
}

const PENALTY: Record<string, number> = { A: 11, T: 10, J: 10, Q: 10, K: 10 };

/** What a card costs in hand: aces 11, faces and tens 10, others their rank. */
export function penalty(card: Card): number {
  const rank = card.code.charAt(0);
  return PENALTY[rank] ?? (Number.parseInt(rank, 10) || 0);
}

export function myTurn(view: TableView): boolean {
  const playing = view.phase === Phase.DRAW || view.phase === Phase.PLAY;
  return playing && view.mySeat !== undefined && view.currentSeat === view.mySeat;
}

/** The card to throw: the costliest that is no joker and not the card taken
 * from the discard this turn; undefined when only jokers are left. */
export function discardChoice(view: TableView): Card | undefined {
  const candidates = view.hand.filter((card) => card.code !== "JK" && card.id !== view.takenDiscardId);
  return candidates.reduce<Card | undefined>(
    (best, card) => (best === undefined || penalty(card) > penalty(best) ? card : best),
    undefined,
  );
}

/** Every move of one turn, each made on the view the one before answered. */
export async function playTurn(table: Table, start: TableView, refused: RummyError[]): Promise<TableView> {
  let view = start;
  try {
    if (view.phase === Phase.DRAW) {
      view = (await table.drawStock({ expectedVersion: view.version })).view;
    }
    const hint = await table.hint();
    if (hint.opens && hint.melds.length > 0) {
      view = (await table.meld(hint.melds, { expectedVersion: view.version })).view;
    }
    const card = discardChoice(view);
    if (card !== undefined) {
      view = (await table.discard(card.id, { expectedVersion: view.version })).view;
    }
  } catch (thrown) {
    const error = RummyError.from(thrown);
    if (error.reason === "") {
      throw error; // not a refusal: the SDK gave up on the server
    }
    refused.push(error);
    view = await table.view();
  }
  return view;
}

/** Queues with `request`, then plays the table it gets to the end. */
export async function playGame(
  client: RummyClient,
  request: EnqueueInit,
  hooks: BotHooks = {},
): Promise<GameRecord> {
  const log = hooks.log ?? (() => undefined);
  const seated = await client.quickMatch(request, {
    onUpdate: (update) => {
      if (update.kind === "ticket") log(`ticket ${update.ticket.ticketId}`);
    },
  });
  log(`seated at table ${seated.tableId}`);
  const table = client.tableOf(seated);
  const first = await table.view();
  const countdown = TurnCountdown.fromView(first);
  const refused: RummyError[] = [];
  const events: TableEvent[] = [];
  let view = first;
  let turns = 0;
  const turn = async () => {
    log(`my turn: ${countdown.seconds() ?? "?"} s left`);
    view = await playTurn(table, view, refused);
    turns += 1;
    await hooks.afterTurn?.(turns, view, table);
  };
  const watch = table.watch(first.lastSeq);
  if (myTurn(view)) {
    await turn();
  }
  for await (const item of watch) {
    if (item.kind === "view") {
      view = item.view;
      countdown.update(view);
    } else {
      const event = item.event;
      events.push(event);
      countdown.see(event);
      if (event.kind === EventKind.GAME_ENDED) {
        break;
      }
      const started = event.kind === EventKind.TURN_STARTED || event.kind === EventKind.TURN_RESUMED;
      if (!started || event.seat !== view.mySeat) {
        continue;
      }
      view = await table.view();
      countdown.update(view);
    }
    if (myTurn(view)) {
      await turn();
    }
  }
  watch.close();
  const last = await table.view();
  log(`game over after ${turns} turns of mine`);
  return { table, first, events, last, turns, refused, watch };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      server: { type: "string", default: "http://127.0.0.1:50052" },
      name: { type: "string", default: "TS bot" },
      device: { type: "string", default: `ts-bot-${process.pid}-${Date.now()}` },
      ruleset: { type: "string", default: "cafe" },
      tls: { type: "boolean", default: false },
    },
  });
  const client = new RummyClient({
    transport: nodeTransport(values.server),
    gameTransport: (target) => nodeTransport(targetUrl(target, values.tls)),
    deviceId: values.device,
    displayName: values.name,
    retry: { onConnection: (state) => console.log(state === "lost" ? "Reconnecting…" : "Connection back.") },
  });
  const me = await client.signIn();
  console.log(`signed in as ${me.playerId}`);
  const record = await playGame(
    client,
    { tableSize: 2, ruleset: values.ruleset, fillWithBotsAfterMs: 300 },
    { log: (line) => console.log(line) },
  );
  const result = record.last.result;
  const winner = result?.winnerSeat === undefined ? "nobody" : `seat ${result.winnerSeat}`;
  console.log(`won by ${winner}; my seat: ${record.last.mySeat}`);
  client.close();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(String(error));
    process.exitCode = 1;
  });
}
