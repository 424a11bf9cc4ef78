// One table: its view, the moves of a turn, its event stream.
//
// Every move is one user action: it gets a fresh `request_id` before its first
// attempt, kept across every retry, so a move whose answer was lost is applied
// once however often it is sent again. Pass the `version` of the view the
// player acted on as `expectedVersion`: if the table moved first (another
// player, the turn timer), the move is refused (ABORTED, VERSION_STALE) and
// nothing is applied.

import {
  create,
  type DescMessage,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import type { Calls } from "./calls.js";
import {
  ClaimRequestSchema,
  DiscardRequestSchema,
  DrawStockRequestSchema,
  GameService,
  GetHintRequestSchema,
  GetTableRequestSchema,
  LayOffRequestSchema,
  LeaveRequestSchema,
  MeldRequestSchema,
  ReposerRequestSchema,
  SwapJokerRequestSchema,
  TakeDiscardRequestSchema,
  type DiscardResponse,
  type DrawStockResponse,
  type GetHintResponse,
  type LayOffPlacement,
  type LayOffPlacementSchema,
  type MeldSpec,
  type MeldSpecSchema,
  type Side,
} from "./gen/rummy/v1/game_pb.js";
import type { TableView } from "./gen/rummy/v1/table_pb.js";
import { newRequestId } from "./ids.js";
import { TableWatch } from "./watch.js";

/** How one move is sent. */
export interface MoveOptions {
  /** The `version` of the view the player acted on: the move is refused
   * (ABORTED, VERSION_STALE) if the table has moved on since. */
  expectedVersion?: bigint | number;
  /** The action's id; a fresh UUID unless given (give one only to send the
   * same action again yourself, say after the app restarted). */
  requestId?: string;
  signal?: AbortSignal;
}

/** What every move answers: the table's new version and the caller's view. */
export interface MoveResult {
  version: bigint;
  view: TableView;
}

/** A move's response, its view always there. */
export type Moved<R> = Omit<R, "view" | "version"> & MoveResult;

type MeldInit = MessageInitShape<typeof MeldSpecSchema>;
type PlacementInit = MessageInitShape<typeof LayOffPlacementSchema>;

/** Request fields an action's caller gives (table, id and version are the SDK's). */
type Fields<I extends DescMessage> = Omit<
  Exclude<MessageInitShape<I>, MessageShape<I>>,
  "tableId" | "requestId" | "expectedVersion" | "$typeName"
>;

export class Table {
  constructor(
    private readonly calls: Calls,
    /** The game service serving this table. */
    readonly transport: Transport,
    readonly tableId: string,
  ) {}

  /** The caller's view of the table (retried across outages). */
  async view(signal?: AbortSignal): Promise<TableView> {
    const request = create(GetTableRequestSchema, { tableId: this.tableId });
    const reply = await this.calls.unary(this.transport, GameService.method.getTable, request, signal);
    return required(reply.view);
  }

  /** The best melds the caller could lay down now (read-only). */
  async hint(signal?: AbortSignal): Promise<GetHintResponse> {
    const request = create(GetHintRequestSchema, { tableId: this.tableId });
    return this.calls.unary(this.transport, GameService.method.getHint, request, signal);
  }

  /** Every event after `afterSeq` (a view's `lastSeq`), across reconnects. */
  watch(afterSeq: bigint, signal?: AbortSignal): TableWatch {
    return new TableWatch(this.calls, this.transport, this.tableId, afterSeq, signal);
  }

  /** Draws the top card of the stock (the response's `card`). */
  drawStock(options?: MoveOptions): Promise<Moved<DrawStockResponse>> {
    return this.move(GameService.method.drawStock, DrawStockRequestSchema, {}, options);
  }

  takeDiscard(options?: MoveOptions): Promise<MoveResult> {
    return this.move(GameService.method.takeDiscard, TakeDiscardRequestSchema, {}, options);
  }

  /** Lays down these melds together, as one action. */
  meld(melds: (MeldSpec | MeldInit)[], options?: MoveOptions): Promise<MoveResult> {
    return this.move(GameService.method.meld, MeldRequestSchema, { melds }, options);
  }

  layOff(
    fields: { meldId: number; cardIds: number[]; side?: Side },
    options?: MoveOptions,
  ): Promise<MoveResult> {
    return this.move(GameService.method.layOff, LayOffRequestSchema, fields, options);
  }

  swapJoker(
    fields: {
      meldId: number;
      jokerCardId: number;
      replacementCardIds: number[];
      placement?:
        | { case: "newMeld"; value: MeldSpec | MeldInit }
        | { case: "layOff"; value: LayOffPlacement | PlacementInit }
        | { case: undefined; value?: undefined };
    },
    options?: MoveOptions,
  ): Promise<MoveResult> {
    return this.move(GameService.method.swapJoker, SwapJokerRequestSchema, fields, options);
  }

  discard(cardId: number, options?: MoveOptions): Promise<Moved<DiscardResponse>> {
    return this.move(GameService.method.discard, DiscardRequestSchema, { cardId }, options);
  }

  reposer(options?: MoveOptions): Promise<MoveResult> {
    return this.move(GameService.method.reposer, ReposerRequestSchema, {}, options);
  }

  /** Claims the discard on offer ("Puis-je ?"), named by its card id. */
  claim(cardId: number, options?: MoveOptions): Promise<MoveResult> {
    return this.move(GameService.method.claim, ClaimRequestSchema, { cardId }, options);
  }

  /** Resigns: the seat plays no more turns. */
  leave(options?: MoveOptions): Promise<MoveResult> {
    return this.move(GameService.method.leave, LeaveRequestSchema, {}, options);
  }

  /** One action: its request made once, with a fresh request id, then sent
   * (and sent again while that is safe) until answered. */
  private async move<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    schema: I,
    fields: Fields<I>,
    options: MoveOptions = {},
  ): Promise<Moved<MessageShape<O>>> {
    const init = {
      ...fields,
      tableId: this.tableId,
      requestId: options.requestId ?? newRequestId(),
      ...(options.expectedVersion === undefined ? {} : { expectedVersion: BigInt(options.expectedVersion) }),
    };
    const request = create(schema, init as unknown as MessageInitShape<I>);
    const reply = await this.calls.unary(this.transport, method, request, options.signal);
    const answer = reply as MessageShape<O> & { version: bigint; view?: TableView };
    return { ...answer, version: answer.version, view: required(answer.view) };
  }
}

function required(view: TableView | undefined): TableView {
  if (view === undefined) {
    throw new Error("the server answered no view");
  }
  return view;
}
