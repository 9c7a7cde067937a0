-- Revenue of each window's orders. getvariable('window_start') and getvariable('window_end')
-- are the window's bounds (UTC instants); each input is a view of its table.
SELECT CAST(getvariable('window_start') AS DATE) AS day, count(*) AS orders, sum(amount) AS revenue
FROM orders
WHERE ordered_at >= getvariable('window_start') AND ordered_at < getvariable('window_end')
