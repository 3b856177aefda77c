import { scopedFilter, scopedPipeline } from './read-scope';
import { validateMongoOperation } from './validate-mongo-operation';

const SCOPE = { phone: { $in: ['4915550001'] } };
const scopes = new Map([['whatsapp_messages', SCOPE]]);

/** The pipeline as the sandbox would run it: validated first, then scoped. */
function run(collection: string, pipeline: unknown[]) {
  const checked = validateMongoOperation({
    operation: 'aggregate',
    collection,
    pipeline,
  });
  if (!checked.valid) throw new Error(checked.error);
  return scopedPipeline(collection, checked.op.pipeline ?? [], scopes);
}

describe('read scopes (what db_query may see of whatsapp_messages)', () => {
  it('narrows a find/count filter, also one that tries to widen with $or', () => {
    expect(scopedFilter('whatsapp_messages', {}, scopes)).toEqual(SCOPE);
    const widen = {
      $or: [{ phone: '4915559999' }, { phone: { $exists: true } }],
    };
    expect(scopedFilter('whatsapp_messages', widen, scopes)).toEqual({
      $and: [SCOPE, widen],
    });
    expect(scopedFilter('contacts', widen, scopes)).toBe(widen);
  });

  it('puts the scope first in a pipeline on the collection (a distinct-like $group cannot see past it)', () => {
    expect(run('whatsapp_messages', [{ $group: { _id: '$phone' } }])).toEqual([
      { $match: SCOPE },
      { $group: { _id: '$phone' } },
    ]);
    expect(run('contacts', [{ $match: { a: 1 } }])).toEqual([
      { $match: { a: 1 } },
    ]);
  });

  it('scopes $lookup in both forms, keeping localField/foreignField', () => {
    expect(
      run('contacts', [
        {
          $lookup: {
            from: 'whatsapp_messages',
            localField: 'phone',
            foreignField: 'phone',
            as: 'm',
          },
        },
      ]),
    ).toEqual([
      {
        $lookup: {
          from: 'whatsapp_messages',
          localField: 'phone',
          foreignField: 'phone',
          as: 'm',
          pipeline: [{ $match: SCOPE }],
        },
      },
    ]);
    expect(
      run('contacts', [
        {
          $lookup: {
            from: 'whatsapp_messages',
            let: { p: '$phone' },
            pipeline: [{ $match: { $expr: { $eq: ['$phone', '$$p'] } } }],
            as: 'm',
          },
        },
      ]),
    ).toEqual([
      {
        $lookup: {
          from: 'whatsapp_messages',
          let: { p: '$phone' },
          pipeline: [
            { $match: SCOPE },
            { $match: { $expr: { $eq: ['$phone', '$$p'] } } },
          ],
          as: 'm',
        },
      },
    ]);
  });

  it('scopes $unionWith given as a name or as an object', () => {
    expect(run('contacts', [{ $unionWith: 'whatsapp_messages' }])).toEqual([
      {
        $unionWith: {
          coll: 'whatsapp_messages',
          pipeline: [{ $match: SCOPE }],
        },
      },
    ]);
    expect(
      run('contacts', [
        {
          $unionWith: {
            coll: 'whatsapp_messages',
            pipeline: [{ $project: { body: 1 } }],
          },
        },
      ]),
    ).toEqual([
      {
        $unionWith: {
          coll: 'whatsapp_messages',
          pipeline: [{ $match: SCOPE }, { $project: { body: 1 } }],
        },
      },
    ]);
  });

  it('restricts $graphLookup with the scope, also next to its own restriction', () => {
    const graph = {
      from: 'whatsapp_messages',
      startWith: '$phone',
      connectFromField: 'to',
      connectToField: 'phone',
      as: 'chain',
    };
    expect(run('contacts', [{ $graphLookup: graph }])).toEqual([
      { $graphLookup: { ...graph, restrictSearchWithMatch: SCOPE } },
    ]);
    expect(
      run('contacts', [
        {
          $graphLookup: {
            ...graph,
            restrictSearchWithMatch: { $or: [{ phone: { $ne: null } }] },
          },
        },
      ]),
    ).toEqual([
      {
        $graphLookup: {
          ...graph,
          restrictSearchWithMatch: {
            $and: [SCOPE, { $or: [{ phone: { $ne: null } }] }],
          },
        },
      },
    ]);
  });

  it('reaches joins nested in $facet and in sub-pipelines of other collections', () => {
    const out = run('contacts', [
      {
        $facet: {
          a: [
            {
              $unionWith: {
                coll: 'schedule',
                pipeline: [{ $unionWith: 'whatsapp_messages' }],
              },
            },
          ],
          b: [
            {
              $lookup: {
                from: 'ai_notes',
                pipeline: [
                  {
                    $facet: {
                      deep: [
                        {
                          $lookup: {
                            from: 'whatsapp_messages',
                            pipeline: [],
                            as: 'x',
                          },
                        },
                      ],
                    },
                  },
                ],
                as: 'n',
              },
            },
          ],
        },
      },
    ]);
    expect(out).toEqual([
      {
        $facet: {
          a: [
            {
              $unionWith: {
                coll: 'schedule',
                pipeline: [
                  {
                    $unionWith: {
                      coll: 'whatsapp_messages',
                      pipeline: [{ $match: SCOPE }],
                    },
                  },
                ],
              },
            },
          ],
          b: [
            {
              $lookup: {
                from: 'ai_notes',
                pipeline: [
                  {
                    $facet: {
                      deep: [
                        {
                          $lookup: {
                            from: 'whatsapp_messages',
                            pipeline: [{ $match: SCOPE }],
                            as: 'x',
                          },
                        },
                      ],
                    },
                  },
                ],
                as: 'n',
              },
            },
          ],
        },
      },
    ]);
  });

  it('scopes a pipeline on whatsapp_messages that joins it again', () => {
    expect(
      run('whatsapp_messages', [{ $unionWith: { coll: 'whatsapp_messages' } }]),
    ).toEqual([
      { $match: SCOPE },
      {
        $unionWith: {
          coll: 'whatsapp_messages',
          pipeline: [{ $match: SCOPE }],
        },
      },
    ]);
  });
});
