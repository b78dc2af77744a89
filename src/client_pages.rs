//! `Client.listInstances`: paged, filtered listing, newest first. On PostgreSQL the
//! database does it (`steadfast_pg::PostgresProvider::list_instance_page`, keyset by
//! creation time); on SQLite, whose provider has no such query, every instance's info is
//! read and the same order, filters and cursors are applied here.

use duroxide::Client;
use duroxide::providers::InstanceInfo;
use napi_derive::napi;
use steadfast_pg::{InstanceCursor, InstanceQuery};

use crate::client::{NativeClient, NativeInstanceInfo, instance_info_to_js};
use crate::errors::{Code, JsError, client_error, error, guard, provider_error};

#[napi(object)]
pub struct NativeInstanceQuery {
    pub statuses: Option<Vec<String>>,
    pub orchestration_name: Option<String>,
    pub parent_instance_id: Option<String>,
    pub created_from_ms: Option<i64>,
    pub created_before_ms: Option<i64>,
    pub limit: u32,
    pub cursor: Option<String>,
}

#[napi(object)]
pub struct NativeInstancePage {
    pub instances: Vec<NativeInstanceInfo>,
    pub next_cursor: Option<String>,
}

#[napi]
impl NativeClient {
    /// One page of instances, newest first (see `lib/client.js` for the options).
    #[napi]
    pub async fn list_instance_page(
        &self,
        query: NativeInstanceQuery,
    ) -> napi::Result<NativeInstancePage> {
        let (client, pg) = (self.inner.clone(), self.pg.clone());
        guard(async move {
            let query = InstanceQuery {
                statuses: query.statuses,
                orchestration_name: query.orchestration_name,
                parent_instance_id: query.parent_instance_id,
                created_from_ms: query.created_from_ms,
                created_before_ms: query.created_before_ms,
                limit: query.limit,
                cursor: query.cursor,
            };
            let cursor = query
                .check()
                .map_err(|rule| error(Code::InvalidArgument, rule))?;
            let (instances, next_cursor) = match pg {
                Some(pg) => {
                    let page = pg
                        .list_instance_page(&query)
                        .await
                        .map_err(provider_error)?;
                    (page.instances, page.next_cursor)
                }
                None => read_page(&client, &query, cursor).await?,
            };
            Ok(NativeInstancePage {
                instances: instances.into_iter().map(instance_info_to_js).collect(),
                next_cursor,
            })
        })
        .await
    }
}

/// A page over a provider without a paged query: every instance's info, filtered,
/// newest first, after `cursor`.
async fn read_page(
    client: &Client,
    query: &InstanceQuery,
    cursor: Option<InstanceCursor>,
) -> Result<(Vec<InstanceInfo>, Option<String>), JsError> {
    let mut rows = Vec::new();
    for id in client.list_all_instances().await.map_err(client_error)? {
        let info = match client.get_instance_info(&id).await {
            Ok(info) => info,
            // Deleted since it was listed.
            Err(_) => continue,
        };
        let key = InstanceCursor::at_millis(info.created_at as i64, &info.instance_id);
        if matches(query, &info) && cursor.as_ref().is_none_or(|c| before(&key, c)) {
            rows.push((key, info));
        }
    }
    rows.sort_by(|(a, _), (b, _)| {
        (&b.created_at, &b.instance_id).cmp(&(&a.created_at, &a.instance_id))
    });
    let limit = query.limit as usize;
    let next = (rows.len() > limit).then(|| rows[limit - 1].0.encode());
    rows.truncate(limit);
    Ok((rows.into_iter().map(|(_, info)| info).collect(), next))
}

/// Whether `row` comes after the cursor `c` in newest-first order.
fn before(row: &InstanceCursor, c: &InstanceCursor) -> bool {
    (&row.created_at, &row.instance_id) < (&c.created_at, &c.instance_id)
}

fn matches(q: &InstanceQuery, i: &InstanceInfo) -> bool {
    let created = i.created_at as i64;
    q.statuses.as_ref().is_none_or(|s| s.contains(&i.status))
        && q.orchestration_name
            .as_ref()
            .is_none_or(|n| *n == i.orchestration_name)
        && q.parent_instance_id
            .as_ref()
            .is_none_or(|p| i.parent_instance_id.as_ref() == Some(p))
        && q.created_from_ms.is_none_or(|from| created >= from)
        && q.created_before_ms.is_none_or(|to| created < to)
}
