// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

package compaction

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
)

// Analyze scans the table and produces a compaction Plan without
// modifying anything. This is the dry-run / planning entry point.
func Analyze(ctx context.Context, tbl *table.Table, cfg Config) (Plan, error) {
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("plan files for compaction analysis: %w", err)
	}

	return cfg.PlanCompaction(tasks)
}
