import type { MongoDocument } from './mongo-operation';

/** Per collection, the filter AI reads of it are narrowed by. */
export type ReadScopes = ReadonlyMap<string, MongoDocument>;

/** A find/count filter narrowed by the collection's scope (unchanged for an unscoped collection). */
export function scopedFilter(
  collection: string,
  filter: MongoDocument,
  scopes: ReadScopes,
): MongoDocument {
  const scope = scopes.get(collection);
  if (!scope) return filter;
  return Object.keys(filter).length ? { $and: [scope, filter] } : scope;
}

/**
 * An aggregation pipeline on `collection` with every read narrowed: a `$match`
 * on the scope first when the collection itself is scoped, and every stage that
 * reads another collection (`$lookup`, `$unionWith`, `$graphLookup`, also inside
 * `$facet` and sub-pipelines, at any depth) narrowed to that collection's scope.
 * Expects a pipeline `validateMongoOperation` already accepted.
 */
export function scopedPipeline(
  collection: string,
  pipeline: readonly MongoDocument[],
  scopes: ReadScopes,
): MongoDocument[] {
  const stages = pipeline.map((stage) => scopedStage(stage, scopes));
  const scope = scopes.get(collection);
  return scope ? [{ $match: scope }, ...stages] : stages;
}

function scopedStage(stage: MongoDocument, scopes: ReadScopes): MongoDocument {
  const [name] = Object.keys(stage);
  const body = stage[name];
  switch (name) {
    case '$lookup':
      return {
        $lookup: joinWithPipeline(body as MongoDocument, 'from', scopes),
      };
    case '$unionWith':
      return {
        $unionWith: joinWithPipeline(
          typeof body === 'string' ? { coll: body } : (body as MongoDocument),
          'coll',
          scopes,
        ),
      };
    case '$graphLookup': {
      const graph = { ...(body as MongoDocument) };
      const scope = scopes.get(String(graph['from']));
      if (scope) {
        const own = graph['restrictSearchWithMatch'] as
          | MongoDocument
          | undefined;
        graph['restrictSearchWithMatch'] =
          own && Object.keys(own).length ? { $and: [scope, own] } : scope;
      }
      return { $graphLookup: graph };
    }
    case '$facet': {
      const facets: MongoDocument = {};
      for (const [key, sub] of Object.entries(body as MongoDocument))
        facets[key] = (sub as MongoDocument[]).map((s) =>
          scopedStage(s, scopes),
        );
      return { $facet: facets };
    }
    default:
      return stage;
  }
}

/** `$lookup` / `$unionWith`: the target's scope as the first stage of its (possibly new) sub-pipeline, which is scoped in turn. */
function joinWithPipeline(
  body: MongoDocument,
  targetField: 'from' | 'coll',
  scopes: ReadScopes,
): MongoDocument {
  const out = { ...body };
  const own = body['pipeline'] as MongoDocument[] | undefined;
  // The sub-pipeline runs on the target collection: scoped as a pipeline on it.
  const target = String(body[targetField]);
  if (own !== undefined || scopes.has(target))
    out['pipeline'] = scopedPipeline(target, own ?? [], scopes);
  return out;
}
