{{ config(materialized='table', meta={'ldp_publish': true, 'ldp_quality': [{'check': 'row_count', 'min': 1}]}) }}
select
  cast(cast('{{ var("window_start") }}' as timestamptz) as date) as day,
  sum(amount) as revenue,
  count(*) as orders
from {{ source('raw', 'orders') }}
where ordered_at >= cast('{{ var("window_start") }}' as timestamptz)
  and ordered_at < cast('{{ var("window_end") }}' as timestamptz)
